"""onnxruntime's GatherPacked (`ops/ms_gather_packed.py`) against onnxruntime, bit for bit.

The oracle is onnxruntime 1.32's CPUExecutionProvider. Single-node com.microsoft models
are built with onnx.helper over seeded random packed tables (random bytes: every scale,
code and float pattern, NaN, inf and subnormals included) and random indices, imported
with `from_onnx` and run in a Session. Outputs are compared as raw bits. onnxruntime's
Python API cannot return bfloat16, so its bfloat16 output is widened by a Cast to float
(exact: the Cast shifts the bits, checked in `test_oracle_cast_keeps_bfloat16_bits`).
The IQ formats' grids and code values are measured from onnxruntime again here and
compared with the module's tables.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import ConversionError, OpAttributeError, ShapeError  # noqa: E402
from onegraph.ops import REGISTRY, TensorInfo  # noqa: E402

from .single_node import ort_session  # noqa: E402

MS = "com.microsoft"
OP = "GatherPacked"
# packed_type -> (block elements, block bytes), as GGML defines the formats
FORMATS = {0: (1, 4), 1: (1, 2), 30: (1, 2), 2: (32, 18), 6: (32, 22), 8: (32, 34),
           13: (256, 176), 14: (256, 210), 16: (256, 66), 17: (256, 74), 18: (256, 98),
           20: (32, 18), 22: (256, 82), 23: (256, 136)}
QUANTIZED = sorted(set(FORMATS) - {0, 1, 30})
# where each quantized format keeps its float16 scales within a block
SCALES_AT = {2: [0], 6: [0], 8: [0], 13: [0, 2], 14: [208], 16: [0], 17: [0], 18: [0],
             20: [0], 22: [0], 23: [0]}
OUTPUT_DTYPES = (1, 10, 16)
_BITS = {1: np.uint32, 10: np.uint16, 16: np.uint16}


# --------------------------------------------------------------------------------------
# Harness
# --------------------------------------------------------------------------------------


def _model(data, indices, attrs, feed_data=True, widen=False):
    """One GatherPacked node; data a graph input (or an initializer), indices a graph
    input; `widen` appends a Cast to float of a bfloat16 output (for onnxruntime)."""
    od = attrs.get("output_dtype", 16)
    nodes = [helper.make_node(OP, ["data", "indices"], ["y"], domain=MS, **attrs)]
    out, out_type = "y", od
    if widen and od == TensorProto.BFLOAT16:
        nodes.append(helper.make_node("Cast", ["y"], ["y32"], to=TensorProto.FLOAT))
        out, out_type = "y32", TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info(
        "indices", helper.np_dtype_to_tensor_dtype(indices.dtype), list(indices.shape))]
    inits = []
    if feed_data:
        inputs.insert(0, helper.make_tensor_value_info("data", TensorProto.UINT8,
                                                       list(data.shape)))
    else:
        inits.append(numpy_helper.from_array(data, "data"))
    graph = helper.make_graph(nodes, OP, inputs,
                              [helper.make_tensor_value_info(out, out_type, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(MS, 1)], ir_version=9)


def _ort_bits(data, indices, attrs):
    """onnxruntime's output as raw bits (uint32 for float, uint16 for the halves)."""
    od = attrs.get("output_dtype", 16)
    session = ort_session(_model(data, indices, attrs, widen=True), optimize=False)
    y = session.run(None, {"data": data, "indices": indices})[0]
    if od == 16:
        return (y.view(np.uint32) >> 16).astype(np.uint16)
    return y.view(_BITS[od])


def _og(data, indices, attrs, feed_data=True):
    model = _model(data, indices, attrs, feed_data)
    feeds = {"indices": indices}
    if feed_data:
        feeds["data"] = data
    return onegraph.Session(from_onnx(model)).run("y", feeds)


def _og_bits(data, indices, attrs):
    y = _og(data, indices, attrs)
    od = attrs.get("output_dtype", 16)
    assert y.dtype.name == {1: "float32", 10: "float16", 16: "bfloat16"}[od]
    return y.view(_BITS[od])


def _kernel(inputs, attrs):
    definition = REGISTRY.get(OP, MS)
    return definition.kernel(list(inputs), definition.resolve_attrs(attrs), None)[0]


def _infer(data_info, indices_info, attrs):
    definition = REGISTRY.get(OP, MS)
    return definition.infer(definition.resolve_attrs(attrs), [data_info, indices_info])[0]


def _row_bytes(packed_type, k):
    block, size = FORMATS[packed_type]
    return k // block * size


def _assert_same(data, indices, attrs):
    want = _ort_bits(data, indices, attrs)
    got = _og_bits(data, indices, attrs)
    assert got.shape == want.shape == indices.shape + (attrs["K"],)
    bad = got != want
    assert not bad.any(), (f"{bad.sum()} of {bad.size} differ: onegraph "
                           f"{[hex(v) for v in got[bad][:4]]}, onnxruntime "
                           f"{[hex(v) for v in want[bad][:4]]}")
    return got


# --------------------------------------------------------------------------------------
# Every format, random bytes, bit for bit
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("output_dtype", OUTPUT_DTYPES)
@pytest.mark.parametrize("packed_type", sorted(FORMATS))
def test_random_bytes_match_onnxruntime(packed_type, output_dtype):
    """Random tables (every byte pattern: NaN / inf / subnormal values and scales) and
    random indices in and out of range, eight seeds, each a different K and rank."""
    block, _ = FORMATS[packed_type]
    for seed in range(8):
        rng = np.random.default_rng(1000 * packed_type + 10 * output_dtype + seed)
        k = block * int(rng.integers(1, 4)) * (32 if block == 1 else 1)
        vocab = int(rng.integers(1, 40))
        data = rng.integers(0, 256, (vocab, _row_bytes(packed_type, k)), dtype=np.uint8)
        shape = tuple(int(d) for d in rng.integers(1, 5, seed % 3 + 1))
        indices = rng.integers(-vocab, 2 * vocab, shape).astype(
            np.int32 if seed % 2 else np.int64)
        _assert_same(data, indices, {"packed_type": packed_type, "K": k,
                                     "output_dtype": output_dtype})


def _finite_scales(rng, data, packed_type):
    """Give every block float16 scales of moderate size (biased exponents 8..19), so the
    k-quants' products round inside the normal range and their order shows."""
    _, size = FORMATS[packed_type]
    blocks = data.reshape(data.shape[0], -1, size)
    for at in SCALES_AT[packed_type]:
        blocks[:, :, at + 1] = rng.integers(0x20, 0x50, blocks.shape[:2])


@pytest.mark.parametrize("packed_type", QUANTIZED)
def test_finite_scales_match_onnxruntime(packed_type):
    """Quantized formats with finite scales: every value a number, so the rounding of
    (d * scale) * code - dmin * min shows in every output type."""
    for seed in range(6):
        rng = np.random.default_rng(seed)
        k = FORMATS[packed_type][0] * 2
        data = rng.integers(0, 256, (64, _row_bytes(packed_type, k)), dtype=np.uint8)
        _finite_scales(rng, data, packed_type)
        for od in OUTPUT_DTYPES:
            got = _assert_same(data, np.arange(64, dtype=np.int64),
                               {"packed_type": packed_type, "K": k, "output_dtype": od})
            if od == 1:
                assert np.isfinite(got.view(np.float32)).all()


def _half_bits(values):
    return np.asarray(values, np.float16).view(np.uint8).reshape(-1, 2)


def test_hand_built_blocks():
    """Blocks built by hand decode to the values GGML's definitions give (an oracle
    independent of onnxruntime)."""
    f32 = {"output_dtype": 1}
    # Q4_0: d = 0.5; byte j = code j (low) | code j + 16 (high)
    codes = np.arange(32, dtype=np.uint8) % 16
    q4 = np.concatenate([_half_bits([0.5])[0], codes[:16] | (codes[16:] << 4)])[None]
    y = _kernel([q4, np.array([0])], {"packed_type": 2, "K": 32, **f32})
    np.testing.assert_array_equal(y[0], (codes.astype(np.float32) - 8) * 0.5)
    # Q5_0: fifth bits of odd values set
    qh = np.array([0xAA, 0xAA, 0xAA, 0xAA], np.uint8)
    q5 = np.concatenate([_half_bits([2.0])[0], qh, codes[:16] | (codes[16:] << 4)])[None]
    y = _kernel([q5, np.array([0])], {"packed_type": 6, "K": 32, **f32})
    five = codes + 16 * (np.arange(32) % 2)
    np.testing.assert_array_equal(y[0], (five - 16.0) * 2)
    # Q8_0: int8 codes -16..15 times 0.25
    q8 = np.concatenate([_half_bits([0.25])[0],
                         np.arange(-16, 16, dtype=np.int8).view(np.uint8)])[None]
    y = _kernel([q8, np.array([0])], {"packed_type": 8, "K": 32, **f32})
    np.testing.assert_array_equal(y[0], np.arange(-16, 16) * 0.25)
    # Q6_K: d = 1, scale i = i + 1, every code 32 + 1 (value = scale)
    q6 = np.zeros(210, np.uint8)
    q6[:128] = 0x11
    q6[128:192] = 0b10101010  # code 33 = 0b10_0001: every high bit pair 0b10
    q6[192:208] = np.arange(1, 17)
    q6[208:210] = _half_bits([1.0])[0]
    y = _kernel([q6[None], np.array([0])], {"packed_type": 14, "K": 256, **f32})
    np.testing.assert_array_equal(y[0], np.repeat(np.arange(1, 17), 16).astype(np.float32))
    # Q5_K: d = 1, dmin = 0.5, group g has scale g + 1 and min g; codes 3 (no fifth bit)
    q5k = np.zeros(176, np.uint8)
    q5k[0:4] = _half_bits([1.0, 0.5]).reshape(-1)
    scales, mins = np.arange(1, 9, dtype=np.uint8), np.arange(8, dtype=np.uint8)
    q5k[4:8], q5k[8:12] = scales[:4], mins[:4]
    q5k[12:16] = scales[4:] | (mins[4:] << 4)
    q5k[48:176] = 0x33
    y = _kernel([q5k[None], np.array([0])], {"packed_type": 13, "K": 256, **f32})
    want = np.repeat(scales * 3.0 - mins * 0.5, 32).astype(np.float32)
    np.testing.assert_array_equal(y[0], want)
    for data in (q4, q5, q8, q6[None], q5k[None]):
        pt = {18: 2, 22: 6, 34: 8, 210: 14, 176: 13}[data.shape[1]]
        _assert_same(data, np.array([0, 0]), {"packed_type": pt,
                                               "K": 32 if data.shape[1] < 40 else 256, **f32})


@pytest.mark.parametrize("output_dtype", OUTPUT_DTYPES)
def test_special_scales_and_values(output_dtype):
    """Subnormal, zero, negative zero, inf and NaN float16 scales; float formats
    holding NaN (both signs, payloads), inf, subnormals and values that overflow or
    round to subnormals in the output type."""
    specials = np.array([0x0001, 0x03FF, 0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE01,
                         0x7C01, 0x3C00, 0x8001, 0x0400], np.uint16)
    rng = np.random.default_rng(7)
    for pt in QUANTIZED:
        block, size = FORMATS[pt]
        for at in SCALES_AT[pt]:
            data = rng.integers(0, 256, (len(specials), size), dtype=np.uint8)
            data[:, at:at + 2] = specials.view(np.uint8).reshape(-1, 2)
            _assert_same(data, np.arange(len(specials)), {"packed_type": pt, "K": block,
                                                          "output_dtype": output_dtype})
    floats = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-40,
                       65520.0, 65519.0, 6e-8, 3e-8, 3.4e38, 1.0 + 2 ** -8,
                       1.0 + 3 * 2 ** -9, 5.96e-8], np.float32)
    bits = floats.view(np.uint32).copy()
    bits[1] = 0xFFA00001  # a negative signalling NaN with a payload
    data = bits.view(np.uint8).reshape(1, -1)
    _assert_same(data, np.array([0]), {"packed_type": 0, "K": len(floats),
                                       "output_dtype": output_dtype})
    halves = np.arange(0, 65536, 4, dtype=np.uint32).astype(np.uint16)  # every 4th half
    for pt in (1, 30):
        data = halves.view(np.uint8).reshape(64, -1)
        _assert_same(data, np.arange(64), {"packed_type": pt, "K": data.shape[1] // 2,
                                           "output_dtype": output_dtype})


def test_nan_outputs_are_onnxruntimes():
    """NaN rounded to float16 keeps its sign only (0x7E00 / 0xFE00); to bfloat16 it is
    0x7FC1 whatever its sign; float output keeps the payload."""
    bits = np.array([0x7FC01234, 0xFFA00001], np.uint32)
    data = bits.view(np.uint8).reshape(1, 8)
    idx = np.array([0])
    y = _kernel([data, idx], {"packed_type": 0, "K": 2, "output_dtype": 10})
    assert y.view(np.uint16).tolist() == [[0x7E00, 0xFE00]]
    y = _kernel([data, idx], {"packed_type": 0, "K": 2, "output_dtype": 16})
    assert y.view(np.uint16).tolist() == [[0x7FC1, 0x7FC1]]
    y = _kernel([data, idx], {"packed_type": 0, "K": 2, "output_dtype": 1})
    assert y.view(np.uint32).tolist() == [bits.tolist()]


def test_oracle_cast_keeps_bfloat16_bits():
    """The Cast the harness appends widens every bfloat16 pattern by a shift."""
    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    tensor = helper.make_tensor("c", TensorProto.BFLOAT16, [65536], bits.tobytes(), raw=True)
    graph = helper.make_graph([helper.make_node("Cast", ["c"], ["y"], to=TensorProto.FLOAT)],
                              "cast", [], [helper.make_tensor_value_info("y", 1, None)],
                              [tensor])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=9)
    y = ort_session(model, optimize=False).run(None, {})[0]
    np.testing.assert_array_equal(y.view(np.uint32), bits.astype(np.uint32) << 16)


# --------------------------------------------------------------------------------------
# Indices
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_out_of_range_indices_select_row_zero(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    data = rng.integers(0, 256, (5, 18 * 2), dtype=np.uint8)
    indices = np.array([[0, 4, 5, -1], [-5, -6, info.min, info.max], [3, 2, 1, 100]], dtype)
    attrs = {"packed_type": 2, "K": 64, "output_dtype": 1}
    got = _assert_same(data, indices, attrs)
    whole = _kernel([data, np.arange(5)], attrs).view(np.uint32)
    rows = np.array([[0, 4, 0, 0], [0, 0, 0, 0], [3, 2, 1, 0]])
    np.testing.assert_array_equal(got, whole[rows])


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 2, 4)])
@pytest.mark.parametrize("vocab", [0, 3])
def test_empty_indices(shape, vocab):
    """Empty indices give an empty output of indices.shape + [K], even from vocab 0."""
    data = np.zeros((vocab, 34), np.uint8)
    indices = np.zeros(shape, np.int64)
    for od in OUTPUT_DTYPES:
        _assert_same(data, indices, {"packed_type": 8, "K": 32, "output_dtype": od})


def test_scalar_index():
    data = np.random.default_rng(4).integers(0, 256, (3, 256), dtype=np.uint8)
    got = _assert_same(data, np.array(2, np.int32), {"packed_type": 1, "K": 128,
                                                     "output_dtype": 1})
    assert got.shape == (128,)


# --------------------------------------------------------------------------------------
# Inference, import, export
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("od,dtype", [(1, "float32"), (10, "float16"), (16, "bfloat16")])
def test_inference(od, dtype):
    attrs = {"packed_type": 8, "K": 64, "output_dtype": od}
    info = _infer(TensorInfo(np.dtype(np.uint8), (None, 68)),
                  TensorInfo(np.dtype(np.int32), (2, None, 3)), attrs)
    assert np.dtype(info.dtype).name == dtype and info.shape == (2, None, 3, 64)
    info = _infer(TensorInfo(np.dtype(np.uint8), None), TensorInfo(np.dtype(np.int64), None),
                  attrs)
    assert np.dtype(info.dtype).name == dtype and info.shape is None
    info = _infer(TensorInfo(np.dtype(np.uint8), (7, 68)), TensorInfo(np.dtype(np.int64), ()),
                  attrs)
    assert info.shape == (64,)


def test_default_output_dtype_is_bfloat16():
    data = np.random.default_rng(5).integers(0, 256, (4, 18), dtype=np.uint8)
    got = _og(data, np.array([1, 2]), {"packed_type": 2, "K": 32})
    assert got.dtype.name == "bfloat16"
    np.testing.assert_array_equal(got.view(np.uint16),
                                  _ort_bits(data, np.array([1, 2]), {"packed_type": 2,
                                                                      "K": 32}))


def test_import_with_constant_table_and_export_round_trip():
    """from_onnx + Session on a model whose table is an initializer; to_onnx writes the
    node back (com.microsoft opset 1) and onnxruntime runs the export alike."""
    rng = np.random.default_rng(6)
    data = rng.integers(0, 256, (10, 176), dtype=np.uint8)
    indices = rng.integers(-3, 13, (4, 5)).astype(np.int64)
    attrs = {"packed_type": 13, "K": 256, "output_dtype": 1}
    model = _model(data, indices, attrs, feed_data=False)
    graph = from_onnx(model)
    got = onegraph.Session(graph).run("y", {"indices": indices})
    want = ort_session(model).run(None, {"indices": indices})[0]
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    exported = to_onnx(graph)
    assert {o.domain: o.version for o in exported.opset_import}.get(MS) == 1
    assert [n.op_type for n in exported.graph.node if n.domain == MS] == [OP]
    again = ort_session(exported).run(None, {"indices": indices})[0]
    np.testing.assert_array_equal(again.view(np.uint32), want.view(np.uint32))


# --------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------


def _refused_by_onnxruntime(data, indices, attrs):
    with pytest.raises(Exception):  # noqa: B017 - onnxruntime's own error types vary
        _ort_bits(data, indices, attrs)


@pytest.mark.parametrize("attrs,words", [
    ({"packed_type": 3, "K": 32}, "packed_type 3 is not a GGML type"),
    ({"packed_type": 31, "K": 32}, "packed_type 31"),
    ({"packed_type": -1, "K": 32}, "packed_type -1"),
    ({"packed_type": 2, "K": 16}, r"K \(16\) must be a positive multiple of Q4_0's block"),
    ({"packed_type": 13, "K": 64}, r"K \(64\) must be .* Q5_K's block size 256"),
    ({"packed_type": 0, "K": 0}, r"K \(0\) must be a positive"),
    ({"packed_type": 0, "K": -4}, r"K \(-4\)"),
    ({"packed_type": 2, "K": 32, "output_dtype": 11}, "output_dtype 11 must be"),
    ({"packed_type": 2, "K": 32, "output_dtype": 7}, "output_dtype 7 must be"),
])
def test_bad_attributes(attrs, words):
    with pytest.raises(OpAttributeError, match=f"{OP}: {words}"):
        REGISTRY.get(OP, MS).resolve_attrs(attrs)
    data = np.zeros((2, 18), np.uint8)
    model = _model(data, np.array([0]), attrs)
    with pytest.raises(ConversionError, match=words):  # import names the node
        from_onnx(model)
    if attrs.get("output_dtype") in (None, 1, 10, 16):
        _refused_by_onnxruntime(data, np.array([0]), dict(attrs, output_dtype=1))


def test_missing_required_attributes():
    for name in ("packed_type", "K"):
        attrs = {k: v for k, v in {"packed_type": 2, "K": 32}.items() if k != name}
        with pytest.raises(OpAttributeError, match=name):
            REGISTRY.get(OP, MS).resolve_attrs(attrs)


def _measured_grid(packed_type):
    """A grid measured from onnxruntime as the module's tables were: rows with d = 1,
    every 4-bit scale 1, no signs and each grid index in turn, divided by the scale."""
    one = np.array([1.0], np.float16).view(np.uint8)
    scale_word = np.full(8, 1 << 28, np.uint32).view(np.uint8)
    if packed_type == 16:  # per 32 values: 4 index bytes, a uint32 of signs and scale
        rows = np.zeros((8, 66), np.uint8)
        groups = rows[:, 2:].reshape(8, 8, 8)
        groups[:, :, :4] = np.arange(256).reshape(8, 8, 4)
        groups[:, :, 4:] = scale_word.reshape(8, 4)
        rows[:, 2:] = groups.reshape(8, 64)
        scale, width = 0.375, 8
    elif packed_type == 17:  # 32 uint16 codes (9-bit index, 7-bit sign), scale bytes
        rows = np.zeros((16, 74), np.uint8)
        rows[:, 2:66] = np.arange(512, dtype=np.uint16).reshape(16, 32).view(np.uint8)
        rows[:, 66:] = 0x11
        scale, width = 0.375, 8
    elif packed_type == 22:  # index low bytes, sign bytes, index top-bit pairs, scales
        rows = np.zeros((32, 82), np.uint8)
        index = np.arange(1024).reshape(32, 8, 4)
        rows[:, 2:34] = (index & 255).reshape(32, 32)
        rows[:, 66:74] = ((index >> 8) << np.array([0, 2, 4, 6])).sum(axis=2)
        rows[:, 74:] = 0x11
        scale, width = 0.375, 8
    else:  # IQ3_XXS: 64 index bytes, then 8 uint32 of signs and scale
        rows = np.zeros((4, 98), np.uint8)
        rows[:, 2:66] = np.arange(256).reshape(4, 64)
        rows[:, 66:] = scale_word
        scale, width = 0.75, 4
    rows[:, :2] = one
    y = _ort_bits(rows, np.arange(len(rows)), {"packed_type": packed_type, "K": 256,
                                               "output_dtype": 1}).view(np.float32)
    return (y / np.float32(scale)).reshape(-1, width)


@pytest.mark.parametrize("packed_type,table", [(16, "_IQ2_XXS"), (17, "_IQ2_XS"),
                                               (22, "_IQ2_S"), (18, "_IQ3_XXS")])
def test_iq_grids_are_onnxruntimes(packed_type, table):
    """The grids the module holds are those onnxruntime's kernel decodes by."""
    from onegraph.ops import ms_gather_packed

    np.testing.assert_array_equal(_measured_grid(packed_type),
                                  getattr(ms_gather_packed, table))


def test_iq4_values_are_onnxruntimes():
    """IQ4_NL with d = 1 and byte j = j | (15 - j) << 4: the 16 code values, then
    them reversed."""
    row = np.zeros((1, 18), np.uint8)
    row[0, :2] = np.array([1.0], np.float16).view(np.uint8)
    codes = np.arange(16, dtype=np.uint8)
    row[0, 2:] = codes | ((15 - codes) << 4)
    y = _assert_same(row, np.array([0]), {"packed_type": 20, "K": 32, "output_dtype": 1})
    values = y.view(np.float32)[0]
    from onegraph.ops import ms_gather_packed

    np.testing.assert_array_equal(values[:16], ms_gather_packed._IQ4_VALUES)
    np.testing.assert_array_equal(values[16:], values[:16][::-1])


@pytest.mark.parametrize("packed_type", [16, 17, 18, 22])
def test_iq_signs_negate(packed_type):
    """Sign bits negate (a NaN's sign flips too): every sign code, with NaN, inf, zero
    and ordinary scales."""
    rng = np.random.default_rng(packed_type)
    _, size = FORMATS[packed_type]
    data = rng.integers(0, 256, (40, size), dtype=np.uint8)
    data[:4, :2] = np.array([0x7E00, 0xFE01, 0x7C00, 0x0000], np.uint16).view(
        np.uint8).reshape(4, 2)
    for od in OUTPUT_DTYPES:
        _assert_same(data, np.arange(40), {"packed_type": packed_type, "K": 256,
                                           "output_dtype": od})


_Q4 = {"packed_type": 2, "K": 64, "output_dtype": 1}


@pytest.mark.parametrize("data,indices,attrs,words", [
    (np.zeros((3, 35), np.uint8), np.array([0]), _Q4,
     r"data has rows of 35 bytes, but Q4_0 with K=64 needs 36"),
    (np.zeros((3, 37), np.uint8), np.array([0]), _Q4, "rows of 37 bytes"),
    (np.zeros((3, 36), np.uint8), np.zeros(0, np.int64), dict(_Q4, packed_type=6),
     "but Q5_0 with K=64 needs 44"),
    (np.zeros((3, 255), np.uint8), np.array([0]), {"packed_type": 0, "K": 64},
     "but F32 with K=64 needs 256"),
    (np.zeros((108,), np.uint8), np.array([0]), _Q4, r"data must be 2-D uint8 .* \[108\]"),
    (np.zeros((3, 1, 36), np.uint8), np.array([0]), _Q4, "data must be 2-D uint8"),
    (np.zeros((0, 36), np.uint8), np.array([0]), _Q4, "vocab 0"),
    (np.zeros((0, 36), np.uint8), np.array([[-1]]), _Q4, "vocab 0"),
])
def test_bad_inputs(data, indices, attrs, words):
    with pytest.raises(ShapeError, match=f"{OP}: .*{words}"):
        _kernel([data, indices], attrs)
    _refused_by_onnxruntime(data, indices, attrs)
    with pytest.raises(ShapeError, match=words):
        _og(data, indices, attrs)


@pytest.mark.parametrize("data,indices,words", [
    (np.zeros((3, 36), np.int8), np.array([0]), r"data must be 2-D uint8 .*, got int8"),
    (np.zeros((3, 36), np.uint8), np.array([0.0]), "indices must be int32 or int64"),
    (np.zeros((3, 36), np.uint8), np.array([0], np.uint32), "indices must be int32 or int64"),
])
def test_bad_input_types(data, indices, words):
    """Types the schema does not allow (onnxruntime refuses the model)."""
    with pytest.raises(ShapeError, match=f"{OP}: {words}"):
        _kernel([data, indices], _Q4)
    with pytest.raises(ShapeError, match=f"{OP}: "):
        _infer(TensorInfo(data.dtype, data.shape), TensorInfo(indices.dtype, indices.shape),
               _Q4)


def test_inference_refuses_what_the_kernel_refuses():
    with pytest.raises(ShapeError, match="rows of 35 bytes"):
        _infer(TensorInfo(np.dtype(np.uint8), (None, 35)),
               TensorInfo(np.dtype(np.int64), (2,)), _Q4)
    with pytest.raises(ShapeError, match="2-D"):
        _infer(TensorInfo(np.dtype(np.uint8), (36,)), TensorInfo(np.dtype(np.int64), (2,)),
               _Q4)
    with pytest.raises(ShapeError, match="needs 144"):
        _infer(TensorInfo(np.dtype(np.uint8), (3, 145)),
               TensorInfo(np.dtype(np.int64), (2,)), {"packed_type": 20, "K": 256})

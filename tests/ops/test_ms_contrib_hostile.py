"""Hostile inputs to the contrib ops of ms_fused, ms_nchwc, ms_nn, ms_quantization_more and
ms_tensor: one regression case per finding of a seeded mutation fuzzer (inputs and
attributes of the op tests' own calls, mutated: huge or negative attribute values, empty
and 0-d tensors, other dtypes, dropped and extra inputs), each seen failing before its fix.

What a case checks: the kernel (or the inference rule) raises a onegraph error naming
the op and the problem, never a raw IndexError/ValueError/OverflowError/MemoryError from
numpy; results whose size comes from a value (pads, group, crop_size, a Range's length)
are refused past 2 GiB before anything is allocated; and where the fuzzer found onegraph
and onnxruntime disagreeing on a valid input (attribute values other than 0/1, mask
values other than 0/1, SAME padding with long strides, short pooling inputs, int32 bias
wrap-around), onnxruntime's CPU kernel is the oracle: integer outputs compared exactly,
float32 ones to TOL (rtol = atol = 1e-5, the bound the op tests use for these kernels).
Each case that feeds onnxruntime an input it refuses also checks onnxruntime's own
message, so the case cannot pass on an unrelated onnxruntime error.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx  # noqa: E402
from onegraph.errors import (OpAttributeError, ResourceExhaustedError,  # noqa: E402
                             ShapeError)
from onegraph.ops import REGISTRY, TensorInfo  # noqa: E402

from ..ort_int8 import ort_saturates_u8s8  # noqa: E402
from .single_node import node_inputs  # noqa: E402

MS = "com.microsoft"
NCHWC = "com.microsoft.nchwc"
TOL = dict(rtol=1e-5, atol=1e-5)
F32 = np.float32
HUGE = 1 << 40  # a fuzzed attribute value: any allocation it sizes is far beyond memory
BIG = 1 << 30  # a window value within int32 whose padded input is still hundreds of GiB


def _kernel(op, inputs, domain=MS, num_outputs=1, **attrs):
    """The kernel of contrib `op` called directly on `inputs`."""
    opdef = REGISTRY.get(op, domain)
    return opdef.kernel(list(inputs), opdef.resolve_attrs(attrs, num_outputs=num_outputs),
                        None)


def _infer(op, infos, domain=MS, **attrs):
    """The inference rule of contrib `op` on `infos` ((dtype, shape) or (dtype, shape,
    value) tuples, None for an omitted input)."""
    opdef = REGISTRY.get(op, domain)
    return opdef.infer(opdef.resolve_attrs(attrs),
                       [None if i is None else TensorInfo(np.dtype(i[0]), *i[1:])
                        for i in infos])


def _model(op, inputs, n_out=1, **attrs):
    """A one-node model of contrib `op` on (name, array or None) inputs."""
    names, graph_inputs, _ = node_inputs(inputs)
    while names and names[-1] == "":
        names.pop()
    outs = [f"out{i}" for i in range(n_out)]
    node = helper.make_node(op, names, outs, domain=MS, **attrs)
    graph = helper.make_graph([node], op, graph_inputs,
                              [helper.make_empty_tensor_value_info(o) for o in outs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20),
                                                   helper.make_opsetid(MS, 1)], ir_version=9)


def _both(model, inputs):
    """(onegraph's outputs, onnxruntime's CPU outputs) of `model` over `inputs`."""
    feeds = {k: np.asarray(v) for k, v in inputs if v is not None}
    outs = [o.name for o in model.graph.output]
    options = ort.SessionOptions()
    options.log_severity_level = 4
    want = ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"]).run(outs, feeds)
    got = onegraph.Session(from_onnx(model)).run(outs, feeds)
    return got, want


def _rand(shape, seed=0, dtype=F32):
    """Seeded standard-normal values of `shape`."""
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# --------------------------------------------------------------------------------------
# Window attributes and sizes from values (ms_fused, ms_nchwc, ms_quantization_more)
# --------------------------------------------------------------------------------------


def test_fused_conv_window_attributes_out_of_range():
    """Fuzz: pads [1, 1, 1, 2**62] died in numpy ("array is too big"), strides [2**62, 1]
    with OverflowError in its stride tricks, pads 2**40 with a MemoryError."""
    x, w = _rand((1, 2, 6, 6)), _rand((3, 2, 3, 3), 1)
    with pytest.raises(OpAttributeError, match=r"FusedConv: pads .* beyond 2147483647"):
        _kernel("FusedConv", [x, w], pads=[1, 1, 1, 1 << 62], activation="Relu")
    with pytest.raises(OpAttributeError, match=r"FusedConv: strides .* beyond"):
        _kernel("FusedConv", [x, w], strides=[1 << 62, 1])
    with pytest.raises(ResourceExhaustedError,
                       match=r"FusedConv: the padded input of shape .* over the limit"):
        _kernel("FusedConv", [x, w], pads=[1, 1, 1, (1 << 31) - 1])


def test_nchwc_conv_huge_group_and_pads():
    """Fuzz: group 2**40 padded X's channels with 5 PiB of zeros, pads 2**40 a 264 TiB
    padded input; both MemoryErrors (pads past 2**31 are refused as attributes now)."""
    x, w = _rand((1, 16, 9, 9)), _rand((32, 16, 1, 3), 1)
    with pytest.raises(ResourceExhaustedError, match=r"Conv: the padded input .* bytes"):
        _kernel("Conv", [x, w], NCHWC, group=HUGE)
    w3 = _rand((32, 3, 3, 3), 2)
    with pytest.raises(ResourceExhaustedError, match=r"Conv: the padded input .* bytes"):
        _kernel("Conv", [_rand((2, 3, 9, 9)), w3], NCHWC, pads=[1, 1, 1, BIG])


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_nchwc_pool_huge_pads(op):
    """Fuzz: pads [0, 2**40, 0, 0] made MaxPool/AveragePool allocate petabytes (such pads
    are now refused as not smaller than the kernel, as onnxruntime refuses them; a kernel
    as large still reaches the size check)."""
    x = _rand((1, 8, 9, 9))
    with pytest.raises(OpAttributeError, match=rf"{op}: pads .* must be smaller than"):
        _kernel(op, [x], NCHWC, kernel_shape=[3, 3], pads=[0, HUGE, 0, 0])
    with pytest.raises(ResourceExhaustedError, match=rf"{op}: the padded input .* limit"):
        _kernel(op, [x], NCHWC, kernel_shape=[BIG, 3], pads=[BIG - 1, 0, BIG - 1, 0])


def test_nhwc_max_pool_huge_pads():
    """NhwcMaxPool (channels last) with a 2**30 window and pads: refused, not allocated."""
    x = np.zeros((1, 5, 5, 3), np.int8)
    with pytest.raises(ResourceExhaustedError, match=r"NhwcMaxPool: the padded input"):
        _kernel("NhwcMaxPool", [x], kernel_shape=[BIG, BIG], pads=[BIG - 1] * 4)


def _qlinear_conv_inputs():
    """A valid uint8 QLinearConv's nine inputs."""
    rng = np.random.default_rng(3)
    s = lambda v: np.array(v, F32)  # noqa: E731
    return [rng.integers(0, 255, (1, 2, 5, 5)).astype(np.uint8), s(0.02), np.uint8(128),
            rng.integers(0, 255, (3, 2, 3, 3)).astype(np.uint8), s(0.01), np.uint8(0),
            s(0.3), np.uint8(100), np.zeros(3, np.int32)]


def test_qlinear_conv_window_attributes_and_inference():
    """Fuzz: strides 2**62 raised OverflowError, pads 2**62 "array is too big"; the
    inference rule indexed a 0-d x (IndexError) and a missing y_zero_point
    (AttributeError)."""
    inputs = _qlinear_conv_inputs()
    with pytest.raises(OpAttributeError, match=r"QLinearConv: strides .* beyond"):
        _kernel("QLinearConv", inputs, strides=[1 << 62, 1])
    with pytest.raises(OpAttributeError, match=r"QLinearConv: pads .* beyond"):
        _kernel("QLinearConv", inputs, pads=[0, 0, 0, 1 << 62])
    u8, f32 = np.uint8, np.float32
    infos = [(u8, ()), (f32, ()), (u8, ()), (u8, (3, 2, 3, 3)), (f32, ()), (u8, ()),
             (f32, ()), (u8, ()), None]
    with pytest.raises(ShapeError, match="QLinearConv: x and w must have one rank of 3"):
        _infer("QLinearConv", infos)
    infos[0], infos[7] = (u8, (1, 2, 5, 5)), None
    with pytest.raises(ShapeError, match="QLinearConv: y_zero_point is required"):
        _infer("QLinearConv", infos)


def test_conv_transpose_dynamic_pads_huge_output():
    """ConvTransposeWithDynamicPads with strides 2**40: the output would be petabytes."""
    x, w = _rand((1, 2, 3, 3)), _rand((2, 2, 3, 3), 1)
    pads = np.zeros(4, np.int64)
    with pytest.raises(OpAttributeError,
                       match=r"ConvTransposeWithDynamicPads: strides .* beyond"):
        _kernel("ConvTransposeWithDynamicPads", [x, w, pads], strides=[1 << 62, 1])
    with pytest.raises(ResourceExhaustedError,
                       match=r"ConvTransposeWithDynamicPads: the output of shape"):
        _kernel("ConvTransposeWithDynamicPads", [x, w, pads], strides=[1 << 30, 1 << 30])


def test_crop_and_resize_huge_crop_size():
    """Fuzz: crop_size [2**31 - 1, 4] asked numpy for 96 GiB (MemoryError)."""
    x = _rand((1, 2, 7, 9))
    rois = np.array([[0.1, 0.1, 0.9, 0.9]], F32)
    idx = np.zeros(1, np.int32)
    size = np.array([(1 << 31) - 1, 1 << 20], np.int32)
    with pytest.raises(ResourceExhaustedError, match=r"CropAndResize: the output .* limit"):
        _kernel("CropAndResize", [x, rois, idx, size])


def test_range_huge_length():
    """Fuzz: start 2**40, limit -5, delta -3 asked numpy for 2.7 TiB (MemoryError)."""
    start, limit, delta = np.int64(HUGE), np.int64(-5), np.int64(-3)
    with pytest.raises(ResourceExhaustedError, match=r"Range: the output of shape "
                                                     r"\[366503875927\]"):
        _kernel("Range", [start, limit, delta])


def test_skip_group_norm_zero_channels_huge_groups():
    """Fuzz: 0 channels with groups 2**31 - 1 allocated (batch, groups) statistics."""
    z = np.zeros((2, 0, 2, 2), F32)
    c = np.zeros(0, F32)
    with pytest.raises(ResourceExhaustedError, match="SkipGroupNorm: the group statistics"):
        _kernel("SkipGroupNorm", [z, c, c, z], groups=(1 << 31) - 1, activation=1,
                channels_last=0)


# --------------------------------------------------------------------------------------
# Shapes the kernels or inference rules did not check
# --------------------------------------------------------------------------------------


def test_fused_gemm_inner_dims_mismatch():
    """Fuzz: A (4, 0) @ B (6, 5) raised numpy's matmul ValueError from Gemm's kernel."""
    with pytest.raises(ShapeError, match=r"FusedGemm: A' \[4, 0\] and B' \[6, 5\] do not fit"):
        _kernel("FusedGemm", [np.zeros((4, 0), F32), _rand((6, 5))], activation="Relu")


def test_nchwc_global_max_pool_no_pixels():
    """Fuzz: an (1, 0, 0, 9) input raised numpy's "zero-size array to reduction"."""
    for op in ("GlobalMaxPool", "GlobalAveragePool"):
        with pytest.raises(ShapeError, match=rf"{op}: X \[1, 2, 0, 9\] has no pixels"):
            _kernel(op, [np.zeros((1, 2, 0, 9), F32)], NCHWC)


def test_decoder_masked_mha_key_batch_mismatch():
    """Fuzz: a query of batch 0 with key/value and caches of batch 2 died in a numpy
    broadcast."""
    q = np.zeros((0, 1, 16), F32)
    kv = _rand((2, 1, 16))
    cache = _rand((2, 2, 6, 8))
    inputs = [q, kv, kv, None, None, cache, cache, np.array([3], np.int32)]
    with pytest.raises(ShapeError, match=r"DecoderMaskedMultiHeadAttention: key \[2, 1, 16\] "
                                         r"must have query's batch 0"):
        _kernel("DecoderMaskedMultiHeadAttention", inputs, num_outputs=3, num_heads=2,
                past_present_share_buffer=1)


@pytest.mark.parametrize("op, infos, match", [
    ("GatherND", [(F32, (2, 3, 1)), (np.int64, ())], "GatherND: indices must have a last"),
    ("GatherND", [(F32, (2, 3)), (np.int64, (4, 3))], r"GatherND: indices \[4, 3\] address 3"),
    ("CDist", [(F32, ()), (F32, (4, 5))], r"CDist: A must be 2-D, got shape \[\]"),
    ("CDist", [(F32, (5, 4)), (F32, ())], r"CDist: B must be 2-D"),
    ("CropAndResize", [(F32, (1, 2, 7, 9)), (F32, ()), (np.int32, (1,)), (np.int32, (2,))],
     r"CropAndResize: rois must be \(num_rois, 4\)"),
    ("WordConvEmbedding", [(np.int32, ()), (F32, (6, 1, 1, 3)), (F32, (6,)), (F32, (10, 3))],
     "WordConvEmbedding: Sequence must be 2-D"),
    ("RelativePositionBias",
     [(F32, (3, 2)), (np.int64, (0,), np.zeros(0, np.int64)), (np.int64, ())],
     "RelativePositionBias: query_length must be an int64 scalar"),
    ("QAttention", [(np.uint8, (1, 1)), (np.int8, ()), (F32, (24,)), (F32, ()), (F32, ())],
     "QAttention: input must be 3-D and weight 2-D"),
])
def test_inference_rules_check_ranks(op, infos, match):
    """Fuzz: each rule indexed a 0-d, too short or empty shape or value (IndexError)."""
    attrs = {"QAttention": {"num_heads": 2},
             "RelativePositionBias": {"max_distance": 8}}.get(op, {})
    with pytest.raises(ShapeError, match=match):
        _infer(op, infos, **attrs)


def test_zero_d_results_are_arrays():
    """Fuzz: a 0-d DequantizeLinear and a 1-D @ 1-D MatMulInteger16 returned numpy
    scalars, not 0-d arrays (the kernel contract: a tuple of arrays)."""
    (y,) = _kernel("DequantizeLinear", [np.int16(3), np.float32(0.5), np.int16(1)])
    assert isinstance(y, np.ndarray) and y.shape == () and y == np.float32(1.0)
    a = np.array([3, -2, 1], np.int16)
    (y,) = _kernel("MatMulInteger16", [a, a])
    assert isinstance(y, np.ndarray) and y.shape == () and y.dtype == np.int32 and y == 14


# --------------------------------------------------------------------------------------
# Silent differences from onnxruntime's CPU kernels
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("positive", [2, -1, 1 << 40])
def test_murmur_hash3_positive_other_than_one(positive):
    """Fuzz: positive=2**40 gave uint32 where onnxruntime (positive == 1 only) gives
    int32."""
    x = np.arange(2, 9, dtype=np.int32)
    inputs = [("x", x)]
    got, want = _both(_model("MurmurHash3", inputs, positive=positive, seed=3), inputs)
    assert got[0].dtype == want[0].dtype == np.int32
    np.testing.assert_array_equal(got[0], want[0])


def _weight_range():
    """[low, high) of the random int8 weights compared with onnxruntime."""
    return (-64, 64) if ort_saturates_u8s8() else (-127, 127)


def _qattention_inputs(mask):
    """A uint8/int8 QAttention's inputs (batch 2, seq 3, input hidden 4, hidden 6,
    2 heads) with the given mask_index."""
    rng = np.random.default_rng(5)
    return [("input", rng.integers(0, 255, (2, 3, 4)).astype(np.uint8)),
            # within [-64, 63] where onnxruntime's int8 products saturate (ort_int8.py)
            ("weight", rng.integers(*_weight_range(), (4, 6 * 3)).astype(np.int8)),
            ("bias", rng.standard_normal(18).astype(F32)),
            ("input_scale", np.array(0.02, F32)), ("weight_scale", np.array(0.01, F32)),
            ("mask_index", mask), ("input_zero_point", np.array(120, np.uint8)),
            ("weight_zero_point", np.array(3, np.int8))]


@pytest.mark.parametrize("unidirectional, mask", [
    (-(1 << 62), None), (2, None),
    (0, np.array([[1, -1, 1], [0, 1, -3]], np.int32)),
])
def test_qattention_unidirectional_and_mask_values(unidirectional, mask):
    """Fuzz: unidirectional=-2**62 ran causal attention and mask_index -1 kept the key,
    where onnxruntime reads unidirectional == 1 only and masks keys <= 0 (outputs
    differed by up to 16)."""
    inputs = _qattention_inputs(mask)
    got, want = _both(_model("QAttention", inputs, num_heads=2,
                             unidirectional=unidirectional), inputs)
    np.testing.assert_allclose(got[0], want[0], **TOL)


def test_decoder_masked_mha_negative_mask_values():
    """Fuzz: a cross-attention mask_index holding -1 kept that key; onnxruntime masks
    every key whose mask_index is <= 0 (outputs differed by 1.56)."""
    inputs = [("query", _rand((2, 1, 16))), ("key", _rand((2, 2, 5, 8), 1)),
              ("value", _rand((2, 2, 5, 8), 2)),
              ("mask_index", np.array([[1, -1, 0, 1, 0], [1, 1, -7, 1, 1]], np.int32))]
    got, want = _both(_model("DecoderMaskedMultiHeadAttention", inputs, num_heads=2),
                      inputs)
    np.testing.assert_allclose(got[0], want[0], **TOL)


def test_pad_and_upsample_huge_sizes():
    """Fuzz: Pad with pads 2**31 - 1 asked for 48 GiB, nchwc Upsample with scale 2**40
    for 3 PiB (MemoryErrors)."""
    x = _rand((3, 4))
    pads = np.array([1, (1 << 31) - 1, 2, 1 << 33], np.int64)
    with pytest.raises(ResourceExhaustedError, match=r"Pad: the output of shape .* limit"):
        _kernel("Pad", [x, pads], mode="edge")
    x4 = _rand((1, 2, 5, 5))
    for mode in ("nearest", "linear"):
        with pytest.raises(ResourceExhaustedError, match=r"Upsample: the output of shape"):
            _kernel("Upsample", [x4], NCHWC, mode=mode, scales=[1, 1, 2, HUGE])


@pytest.mark.parametrize("op, a, b, want", [
    ("ComplexMul", (F32, (0, 1, 2)), (F32, (3, 2)), (0, 3, 2)),
    ("ComplexMulConj", (F32, (2, 1, 2)), (F32, (0, 2)), (2, 0, 2)),
    ("MatMulInteger16", (np.int16, (0, 1, 3, 7)), (np.int16, (3, 7, 2)), (0, 3, 3, 2)),
])
def test_inference_broadcasts_zero_against_one(op, a, b, want):
    """Fuzz: inference took the larger of a 0 and a 1 broadcast dim (1), the kernels
    rightly give 0."""
    (y,) = _infer(op, [a, b])
    assert y.shape == want
    (k,) = _kernel(op, [np.zeros(a[1], a[0]), np.zeros(b[1], b[0])])
    assert k.shape == want


def test_conv_huge_stride_on_one_window():
    """Fuzz: a depthwise nchwc Conv with strides [65536, 2] took 14 s (one Python step per
    stride phase) for a (1, 112, 56, 56) input; a stride past the input leaves one
    window, the same as the smallest such stride, which onnxruntime's FusedConv gives."""
    x, w = _rand((1, 3, 6, 6)), _rand((4, 3, 3, 3), 1)
    inputs = [("x", x), ("w", w)]
    got, want = _both(_model("FusedConv", inputs, strides=[65536, 2], pads=[1, 1, 1, 1],
                             activation="Relu"), inputs)
    assert got[0].shape == want[0].shape == (1, 4, 1, 3)
    np.testing.assert_allclose(got[0], want[0], **TOL)
    xd, wd = _rand((1, 16, 56, 56)), _rand((16, 1, 3, 3), 2)
    (y,) = _kernel("Conv", [xd, wd], NCHWC, group=16, strides=[1 << 20, 1 << 20],
                   pads=[1, 1, 1, 1])
    assert y.shape == (1, 16, 1, 1)


# --------------------------------------------------------------------------------------
# Inputs onnxruntime refuses, which onegraph ran
# --------------------------------------------------------------------------------------


def _qembed_inputs():
    """A valid int8 QEmbedLayerNormalization's inputs (batch 2, seq 6, hidden 8)."""
    rng = np.random.default_rng(9)
    i8 = lambda *s: rng.integers(-100, 100, s).astype(np.int8)  # noqa: E731
    f = lambda v: np.array(v, F32)  # noqa: E731
    z = np.array(0, np.int8)
    return [("ids", rng.integers(0, 20, (2, 6)).astype(np.int32)),
            ("seg", rng.integers(0, 3, (2, 6)).astype(np.int32)),
            ("word", i8(20, 8)), ("pos", i8(9, 8)), ("segemb", i8(3, 8)),
            ("gamma", i8(8)), ("beta", i8(8)), ("mask", None), ("ws", f(0.01)),
            ("ps", f(0.01)), ("ss", f(0.01)), ("gs", f(0.02)), ("bs", f(0.02)),
            ("wz", z), ("pz", z), ("sz", z), ("gz", z), ("bz", z)]


_Q = _qlinear_conv_inputs()
_QNAMES = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"]


@pytest.mark.parametrize("op, inputs, attrs, match, ort_match", [
    ("FusedConv", [("x", _rand((1, 3, 9, 8))), ("w", _rand((4, 3, 3, 3), 1))],
     dict(auto_pad="SAME_UPPER", pads=[1], strides=[2, 2]), r"FusedConv: pads \[1\] must hold 4",
     "pads has incorrect size"),
    ("FusedConv", [("x", _rand((1, 3, 9, 8))), ("w", _rand((4, 3, 3, 3), 1))],
     dict(auto_pad="SAME_LOWER", dilations=[2, 2]),
     r"FusedConv: dilations \[2, 2\] with auto_pad SAME_LOWER are not supported",
     "Dilation not supported"),
    ("QLinearConv", list(zip(_QNAMES, _Q)), dict(auto_pad="SAME_UPPER", dilations=[2, 2]),
     r"QLinearConv: dilations \[2, 2\] with auto_pad SAME_UPPER", "Dilation not supported"),
    ("FusedMatMul", [("a", _rand((2, 6, 5, 3))), ("b", _rand((4, 2, 6, 5), 1))],
     dict(transA=1 << 40, transB=1, transBatchB=1),
     r"FusedMatMul: transA 1099511627776 does not fit 32 bits",
     "Incompatible dimensions"),
    ("Pad", [("x", _rand((3, 4))), ("p", np.array([-3, 0, 0, 0], np.int64))],
     dict(mode="reflect"), r"Pad: reflect mode crops axis 0 of size 3 to nothing",
     "zero effective input extent"),
    ("Pad", [("x", np.zeros((0, 4), F32)), ("p", np.array([0, 1, 0, 1], np.int64))],
     dict(mode="wrap"), r"Pad: wrap mode cannot pad the empty input \[0, 4\]",
     "Unexpected mode of 3"),
    ("ScaledSiLU", [("x", _rand((2, 3))), ("s", np.array([2.0], F32))], {},
     r"ScaledSiLU: scale must be a scalar, got shape \[1\]", "scale must be a scalar"),
    ("ConvTransposeWithDynamicPads", [("x", _rand((1, 4, 4, 5))), ("w", _rand((4, 3, 3, 3))),
                                      ("p", np.zeros(4, np.int64))],
     dict(auto_pad="Relu"), r"ConvTransposeWithDynamicPads: unknown auto_pad 'Relu'",
     "Unknown AutoPadType"),
    ("QEmbedLayerNormalization", _qembed_inputs(), dict(epsilon=-1.0),
     r"QEmbedLayerNormalization: epsilon must be >= 0, got -1.0", "epsilon_ >= 0"),
])
def test_refused_as_onnxruntime_refuses(op, inputs, attrs, match, ort_match):
    """Fuzz: onnxruntime refuses each of these nodes or inputs (at load or run); onegraph
    ran them. Both refuse now, onegraph with the op's name and the reason."""
    model = _model(op, inputs, n_out=2 if op == "QEmbedLayerNormalization" else 1,
                   **attrs)
    with pytest.raises(Exception, match=ort_match):  # (onnxruntime's own error types)
        _both(model, inputs)
    feeds = {k: np.asarray(v) for k, v in inputs if v is not None}
    with pytest.raises(onegraph.errors.OneGraphError, match=match):
        onegraph.Session(from_onnx(model)).run([o.name for o in model.graph.output], feeds)


@pytest.mark.parametrize("mask, filter_value", [
    (None, -1.0),
    (np.array([[0, 1, 1], [1, 1, 0]], np.int32), None),
    (np.array([[1, 1, 1], [1, 0, 1]], np.int32), -1.0),
    (np.array([[[1, -2, 1], [0, 1, 1], [1, 1, 1]]] * 2, np.int32), None),
])
def test_qattention_causal_fill_and_3d_mask(mask, filter_value):
    """Fuzz: with unidirectional=1 onnxruntime gives future keys the lowest float32 (not
    mask_filter_value: outputs differed by 8.6 at mask_filter_value=-1, and by 5.7 where
    a query's only past key was padding), and reads a 3-D mask's -2 as masked (16.9)."""
    inputs = _qattention_inputs(mask)
    attrs = dict(num_heads=2, unidirectional=0 if mask is not None and mask.ndim == 3 else 1)
    if filter_value is not None:
        attrs["mask_filter_value"] = filter_value
    got, want = _both(_model("QAttention", inputs, **attrs), inputs)
    np.testing.assert_allclose(got[0], want[0], **TOL)


@pytest.mark.parametrize("mode", ["SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize("height, stride", [(7, 7), (12, 12), (5, 9), (9, 7)])
def test_same_padding_with_stride_longer_than_kernel(mode, height, stride):
    """Fuzz: QLinearConv auto_pad=SAME_UPPER, strides [7, 2] on a 7-row input differed
    from onnxruntime by 28 quantization steps: onnxruntime keeps a negative SAME padding
    (the window moves into the input), onegraph clamped it to 0. FusedConv, QLinearConv
    and NhwcMaxPool against onnxruntime; (9, 7) (positive padding) and (5, 9) SAME_LOWER
    (a head offset of 0) are controls that passed before the fix too."""
    rng = np.random.default_rng(height * stride)
    x, w = _rand((1, 2, height, 5), height), _rand((3, 2, 3, 2), stride)
    attrs = dict(auto_pad=mode, strides=[stride, 2])
    inputs = [("x", x), ("w", w)]
    got, want = _both(_model("FusedConv", inputs, **attrs), inputs)
    np.testing.assert_allclose(got[0], want[0], **TOL)
    q = _qlinear_conv_inputs()
    q[0] = rng.integers(0, 255, (1, 2, height, 5)).astype(np.uint8)
    q[3] = rng.integers(0, 255, (3, 2, 3, 2)).astype(np.uint8)
    inputs = list(zip(_QNAMES, q))
    got, want = _both(_model("QLinearConv", inputs, **attrs), inputs)
    np.testing.assert_array_equal(got[0], want[0])
    xi = rng.integers(-128, 127, (1, height, 5, 2)).astype(np.int8)
    inputs = [("x", xi)]
    got, want = _both(_model("NhwcMaxPool", inputs, kernel_shape=[3, 2], **attrs), inputs)
    np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("ceil_mode", [-1, 2])
def test_nhwc_max_pool_ceil_mode_other_than_one(ceil_mode):
    """Fuzz: ceil_mode=-1 gave a (2, 4, 3, 5) output where onnxruntime (ceil only for 1)
    gives (2, 3, 3, 5)."""
    x = np.random.default_rng(4).integers(-128, 127, (1, 7, 7, 2)).astype(np.int8)
    inputs = [("x", x)]
    got, want = _both(_model("NhwcMaxPool", inputs, kernel_shape=[2, 2], strides=[2, 2],
                             ceil_mode=ceil_mode), inputs)
    assert got[0].shape == want[0].shape == (1, 3, 3, 2)
    np.testing.assert_array_equal(got[0], want[0])
    (info,) = _infer("NhwcMaxPool", [(np.int8, (1, 7, 7, 2))], kernel_shape=[2, 2],
                     strides=[2, 2], ceil_mode=ceil_mode)
    assert info.shape == (1, 3, 3, 2)


def _empty_ints(model, name):
    """`model` with its node's ints attribute `name` present but empty."""
    from onnx import AttributeProto

    model.graph.node[0].attribute.append(
        helper.make_attribute(name, [], attr_type=AttributeProto.INTS))
    return model


@pytest.mark.parametrize("op, inputs, attrs, empty, match, ort_match", [
    ("FusedConv", [("x", _rand((1, 2, 2, 7))), ("w", _rand((3, 2, 3, 3), 1))], {}, None,
     r"FusedConv: the \[3, 3\] window .* does not fit the input's spatial dims \[2, 7\]",
     "Invalid input shape"),
    ("FusedConv", [("x", _rand((1, 2, 7, 7))), ("w", _rand((3, 2, 3, 3), 1))], {}, "pads",
     r"FusedConv: pads \[\] must hold 4 values", "pads has incorrect size"),
    ("QLinearConv", list(zip(_QNAMES, _Q)), dict(pads=[1, 1, 1, 1]), "strides",
     r"QLinearConv: strides \[\] must hold 2 values", "strides has incorrect size"),
    ("NhwcMaxPool", [("x", np.zeros((1, 7, 7, 3), np.uint8))],
     dict(kernel_shape=[3, 3], auto_pad="SAME_UPPER", pads=[2, 0, -1, 2]), None,
     r"NhwcMaxPool: pads \[2, 0, -1, 2\] must not be negative", "pads must not contain negative"),
    ("NhwcMaxPool", [("x", np.zeros((1, 8, 7, 4), np.uint8))],
     dict(kernel_shape=[3, 2], strides=[2, 2]), "dilations",
     r"NhwcMaxPool: dilations \[\] must hold 2 values", "dilations has incorrect size"),
    ("NhwcMaxPool", [("x", np.zeros((1, 8, 8, 0), np.int8))], dict(kernel_shape=[2, 2]), None,
     r"NhwcMaxPool: x \[1, 8, 8, 0\] is empty in a dim other than N", "Only N can be zero"),
    ("QLinearConv", list(zip(_QNAMES, _Q[:7] + [np.int8(0)] + _Q[8:])), {}, None,
     r"QLinearConv: x uint8, w uint8 and y int8 is not a supported combination",
     "Could not find an implementation"),
])
def test_refused_as_onnxruntime_refuses_windows(op, inputs, attrs, empty, match,
                                                 ort_match):
    """Fuzz: onnxruntime refuses a conv window longer than its input, empty window
    attributes, negative pooling pads under auto_pad, an NhwcMaxPool input empty in a dim
    other than N and QLinearConv type combinations it has no kernel for; onegraph ran them
    (an empty output, the attribute ignored)."""
    model = _model(op, inputs, **attrs)
    if empty:
        model = _empty_ints(model, empty)
    with pytest.raises(Exception, match=ort_match):  # (onnxruntime's own error types)
        _both(model, inputs)
    feeds = {k: np.asarray(v) for k, v in inputs if v is not None}
    with pytest.raises(onegraph.errors.OneGraphError, match=match):
        onegraph.Session(from_onnx(model)).run([o.name for o in model.graph.output], feeds)


def test_fused_matmul_nonzero_trans_flags_transpose():
    """transA=3 transposes in onnxruntime (any nonzero value within 32 bits): onegraph
    refuses only flags beyond 32 bits, where onnxruntime's shape rule and kernel differ."""
    inputs = [("a", _rand((2, 5, 3))), ("b", _rand((2, 4, 5), 1))]
    got, want = _both(_model("FusedMatMul", inputs, transA=3, transB=-1), inputs)
    np.testing.assert_allclose(got[0], want[0], **TOL)


def test_qlinear_conv_bias_wraps_in_int32():
    """Fuzz: a bias of 2**31 - 1 saturated to 255 here; onnxruntime adds it to its int32
    accumulator, which wraps (0 there)."""
    q = _qlinear_conv_inputs()
    q[8] = np.array([-1578, (1 << 31) - 1, -(1 << 31), 5, -7, 9], np.int32)[:3]
    inputs = list(zip(_QNAMES, q))
    got, want = _both(_model("QLinearConv", inputs, pads=[1, 1, 1, 1]), inputs)
    np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("shape, attrs", [
    ((2, 1, 6, 5), dict(kernel_shape=[2, 2], strides=[2, 2])),
    ((1, 8, 1, 16), dict(kernel_shape=[2, 3], strides=[2, 3])),
    ((1, 6, 7, 2), dict(kernel_shape=[4, 1], strides=[4, 1], auto_pad="SAME_UPPER",
                        dilations=[2, 1])),
    ((1, 3, 5, 2), dict(kernel_shape=[3, 2], strides=[4, 2], auto_pad="SAME_UPPER",
                        dilations=[1, 2])),
])
def test_nhwc_max_pool_short_input_and_dilated_same(shape, attrs):
    """Fuzz: a window longer than the input by less than the stride gave an empty output
    where onnxruntime (C's division) gives one clipped window; SAME_* with dilations gave
    2 windows where onnxruntime (padding as if undilated) gives 1."""
    x = np.random.default_rng(8).integers(-128, 127, shape).astype(np.int8)
    inputs = [("x", x)]
    got, want = _both(_model("NhwcMaxPool", inputs, **attrs), inputs)
    assert got[0].shape == want[0].shape
    np.testing.assert_array_equal(got[0], want[0])
    (info,) = _infer("NhwcMaxPool", [(np.int8, shape)], **attrs)
    assert info.shape == want[0].shape


def test_nhwc_max_pool_pads_not_smaller_than_kernel():
    """Fuzz: pads of 1 with a kernel of 1 ran (windows of padding only, -128 out);
    onnxruntime refuses them ("Pad should be smaller than kernel")."""
    inputs = [("x", np.zeros((1, 5, 6, 2), np.int8))]
    model = _model("NhwcMaxPool", inputs, kernel_shape=[1, 1], pads=[1, 0, 1, 0])
    with pytest.raises(Exception, match="Pad should be smaller than kernel"):
        _both(model, inputs)
    with pytest.raises(onegraph.errors.OneGraphError,
                       match=r"NhwcMaxPool: pads \[1, 0, 1, 0\] must be smaller than the "
                             r"kernel \[1, 1\]"):
        onegraph.Session(from_onnx(model)).run(["out0"], dict(inputs))


def _lstm_inputs():
    """A valid DynamicQuantizeLSTM's inputs (seq 5, batch 2, input 6, hidden 4)."""
    rng = np.random.default_rng(6)
    f = lambda v: np.array(v, F32)  # noqa: E731
    return [("X", _rand((5, 2, 6))), ("W", rng.integers(-100, 100, (1, 6, 16)).astype(np.int8)),
            ("R", rng.integers(-100, 100, (1, 4, 16)).astype(np.int8)),
            ("B", _rand((1, 32), 1)), ("sl", None), ("h0", None), ("c0", None), ("P", None),
            ("ws", f([0.01])), ("wz", np.zeros(1, np.int8)), ("rs", f([0.01])),
            ("rz", np.zeros(1, np.int8))]


@pytest.mark.parametrize("op, inputs, attrs, match, ort_match", [
    ("FusedConv", [("x", _rand((1, 4, 9, 8))), ("w", _rand((6, 4, 3, 3), 1))],
     dict(auto_pad="SAME_UPPER", pads=[1, 1, 1, 1]),
     "FusedConv: auto_pad SAME_UPPER and pads are both given", "both 'auto_pad' and 'pads'"),
    ("QLinearConv", list(zip(_QNAMES, _Q)), dict(auto_pad="VALID", pads=[0, -1, 0, 0]),
     "QLinearConv: auto_pad VALID and pads are both given",
     "pads must not contain negative"),
    ("ScaledSiLU", [("x", _rand((2, 3), dtype=np.float64))], {},
     "ScaledSiLU: X must be float16, float32 or bfloat16, got float64", "tensor\\(double\\)"),
    ("QAttention", _qattention_inputs(np.array([-5, 3], np.int32)), dict(num_heads=2),
     r"QAttention: mask_index end positions must not be negative, got \[-5, 3\]",
     "must be non-negative"),
    ("DynamicQuantizeLSTM", _lstm_inputs(), dict(hidden_size=4, clip=0.0),
     "DynamicQuantizeLSTM: clip must be above 0, got 0.0", "clip_ > 0"),
])
def test_refused_as_onnxruntime_refuses_more(op, inputs, attrs, match, ort_match):
    """Fuzz, second round: onnxruntime refuses a conv with both auto_pad and pads, a
    float64 ScaledSiLU, a negative QAttention end position and a DynamicQuantizeLSTM clip
    of 0; onegraph ran them."""
    model = _model(op, inputs, **attrs)
    with pytest.raises(Exception, match=ort_match):  # (onnxruntime's own error types)
        _both(model, inputs)
    feeds = {k: np.asarray(v) for k, v in inputs if v is not None}
    with pytest.raises(onegraph.errors.OneGraphError, match=match):
        onegraph.Session(from_onnx(model)).run([o.name for o in model.graph.output], feeds)


def test_conv_transpose_dynamic_pads_bias_dtype():
    """Fuzz: a uint64 B ran (onnxruntime's schema refuses a B of another type than X)."""
    inputs = [("x", _rand((1, 2, 3, 3))), ("w", _rand((2, 3, 3, 3), 1)),
              ("p", np.zeros(4, np.int64)), ("b", np.ones(3, np.uint64))]
    model = _model("ConvTransposeWithDynamicPads", inputs)
    with pytest.raises(Exception, match=r"tensor\(uint64\)"):
        _both(model, inputs)
    with pytest.raises(onegraph.errors.OneGraphError,
                       match="ConvTransposeWithDynamicPads: B is uint64, but X is float32"):
        onegraph.Session(from_onnx(model)).run(["out0"], dict(inputs))

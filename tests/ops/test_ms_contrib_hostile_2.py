"""Hostile inputs for the second batch of contrib-op modules (ms_moe, ms_sequence,
ms_gating, MRotaryEmbedding in ms_llm, MatMulBnb4 / MatMulFpQ4 in ms_matmul_nbits).

Each test is one finding of a mutation fuzz (seed cases recorded from the modules'
tests, mutated in shape, dtype, value and attribute, run through the kernel, `infer`
and onnxruntime's CPU provider): it failed before its fix. Wrong inputs must raise a
onegraph error naming the op and the problem, never a raw numpy/Python exception or a
huge allocation; valid edge inputs must agree with onnxruntime.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import helper, numpy_helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx  # noqa: E402
from onegraph.errors import OpAttributeError, ShapeError  # noqa: E402
from onegraph.ops import REGISTRY, TensorInfo  # noqa: E402

from ..ort_int8 import ort_lacks_kernel  # noqa: E402

MS = "com.microsoft"


def _kernel(name, inputs, attrs):
    """Run the kernel of com.microsoft `name` on `inputs` (None leaves one out)."""
    op = REGISTRY.get(name, MS)
    return op.kernel(list(inputs), op.resolve_attrs(attrs), None)


def _infer(name, inputs, attrs):
    """`infer` of com.microsoft `name` on the dtypes and shapes of `inputs`."""
    op = REGISTRY.get(name, MS)
    infos = [None if x is None else TensorInfo(x.dtype, tuple(x.shape), None) for x in inputs]
    return op.infer(op.resolve_attrs(attrs), infos)


def _model(name, feeds, inits, attrs, n_out=1):
    """A one-node com.microsoft model: `feeds` graph inputs, then `inits` initializers
    (name -> array, in input order; "" leaves an optional input out)."""
    names = list(feeds) + list(inits)
    node = helper.make_node(name, names, [f"y{k}" for k in range(n_out)], domain=MS,
                            **attrs)
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype),
                                       v.shape) for k, v in feeds.items()],
        [helper.make_empty_tensor_value_info(f"y{k}") for k in range(n_out)],
        [numpy_helper.from_array(v, k) for k, v in inits.items() if k])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20),
                                                   helper.make_opsetid(MS, 1)],
                             ir_version=9)


def _both(model, feeds, n_out=1):
    """(onegraph's, onnxruntime's) outputs of `model` on `feeds`."""
    outs = [f"y{k}" for k in range(n_out)]
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want = ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"]).run(outs, feeds)
    got = onegraph.Session(from_onnx(model)).run(outs, feeds)
    return got, want


# --------------------------------------------------------------------------------------
# infer on wrong-rank inputs (was: IndexError inside infer)
# --------------------------------------------------------------------------------------


def test_gated_delta_net_infer_1d_value():
    rng = np.random.default_rng(0)
    q = rng.standard_normal((8, 2, 8)).astype(np.float32)
    v = rng.standard_normal(96).astype(np.float32)
    cu = np.array([0, 3, 4, 8], np.int32)
    decay = -rng.random((8, 2)).astype(np.float32)
    inputs = [q, q, v, cu, decay]
    with pytest.raises(ShapeError, match="GatedDeltaNet: query, key and value must"):
        _kernel("GatedDeltaNet", inputs, {"update_rule": "gated"})
    _infer("GatedDeltaNet", inputs, {"update_rule": "gated"})  # unknown shapes, no IndexError


def test_varlen_causal_conv_infer_0d_cumulative_length():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((9, 6)).astype(np.float32)
    w = rng.standard_normal((6, 1, 3)).astype(np.float32)
    cu = np.array(3, np.int32)
    inputs = [x, w, cu]
    with pytest.raises(ShapeError, match="VarlenCausalConvWithState: cumulative_sequence"):
        _kernel("VarlenCausalConvWithState", inputs, {})
    assert _infer("VarlenCausalConvWithState", inputs, {})[2].shape is None


@pytest.mark.parametrize("ids, cu", [(np.array(4, np.int64), np.array([0, 4], np.int32)),
                                     (np.arange(4, dtype=np.int64), np.array(2, np.int32))])
def test_varlen_ngram_hash_infer_0d_inputs(ids, cu):
    attrs = dict(max_ngram_size=3, n_head_per_ngram=1, pad_id=0)
    inputs = [ids, np.array([3, 5, 7], np.int64), np.array([11, 13], np.int64), cu]
    with pytest.raises(ShapeError, match="VarlenNGramHashMapping: .* must be 1-D"):
        _kernel("VarlenNGramHashMapping", inputs, attrs)
    _infer("VarlenNGramHashMapping", inputs, attrs)


# --------------------------------------------------------------------------------------
# MatMulBnb4 block_size
# --------------------------------------------------------------------------------------


def test_matmul_bnb4_huge_block_size_refused():
    # Was a 4 TiB np.repeat of absmax by block_size; onnxruntime takes 16 ... 256 only.
    a = np.ones((2, 32), np.float32)
    b = np.zeros(64, np.uint8)
    absmax = np.ones(1, np.float32)
    attrs = dict(K=32, N=4, block_size=2**40, quant_type=1)
    with pytest.raises(OpAttributeError, match="MatMulBnb4: block_size 1099511627776 must be"):
        _kernel("MatMulBnb4", [a, b, absmax], attrs)


# --------------------------------------------------------------------------------------
# MoE flags (onnxruntime reads them as `== 1`)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["normalize_routing_weights", "use_sparse_mixer",
                                  "swiglu_limit_after_activation"])
@pytest.mark.parametrize("value", [2, -1, 65536])
def test_moe_flag_not_0_or_1_refused(flag, value):
    # Was: normalize_routing_weights=65536 renormalised (onnxruntime: off), another answer.
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 8)).astype(np.float32)
    logits = rng.standard_normal((3, 4)).astype(np.float32)
    fc1 = rng.standard_normal((4, 6, 8)).astype(np.float32)
    fc2 = rng.standard_normal((4, 8, 6)).astype(np.float32)
    attrs = {"k": 2, flag: value}
    with pytest.raises(OpAttributeError, match=f"MoE: {flag} must be 0 or 1, got {value}"):
        _kernel("MoE", [x, logits, fc1, None, fc2], attrs)


def test_moe_normalize_routing_weights_1_matches_onnxruntime():
    rng = np.random.default_rng(3)
    feeds = {"x": rng.standard_normal((3, 8)).astype(np.float32),
             "logits": rng.standard_normal((3, 4)).astype(np.float32)}
    inits = {"fc1": rng.standard_normal((4, 6, 8)).astype(np.float32), "": None,
             "fc2": rng.standard_normal((4, 8, 6)).astype(np.float32)}
    got, want = _both(_model("MoE", feeds, inits, dict(k=2, normalize_routing_weights=1)),
                      feeds)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------------------
# VarlenCausalConvWithState group_size / delta_offset (were ignored)
# --------------------------------------------------------------------------------------


def _varlen_conv_inputs():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((9, 6)).astype(np.float32)
    w = rng.standard_normal((6, 1, 4)).astype(np.float32)
    cu = np.array([0, 3, 4, 9], np.int32)
    state = rng.standard_normal((3, 6, 3)).astype(np.float32)
    return [x, w, cu, None, state]


@pytest.mark.parametrize("group_size, delta_offset", [(2, 0), (1, 1), (1, -1), (0, 0)])
def test_varlen_causal_conv_group_size_delta_offset_refused(group_size, delta_offset):
    # onnxruntime refuses these without kernel_delta; onegraph ignored them.
    attrs = dict(group_size=group_size, delta_offset=delta_offset)
    with pytest.raises(OpAttributeError, match="VarlenCausalConvWithState: group_size "
                                               f"\\({group_size}\\) and delta_offset"):
        _kernel("VarlenCausalConvWithState", _varlen_conv_inputs(), attrs)


def test_varlen_causal_conv_default_group_size_matches_onnxruntime():
    x, w, cu, _, state = _varlen_conv_inputs()
    feeds = {"x": x}
    inits = {"w": w, "cu": cu, "": None, "state": state}
    model = _model("VarlenCausalConvWithState", feeds, inits,
                   dict(group_size=1, delta_offset=0), n_out=2)
    got, want = _both(model, feeds, n_out=2)
    for g, o in zip(got, want):
        np.testing.assert_allclose(g, o, rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------------------
# Generation ops (through a Session: they run subgraphs)
# --------------------------------------------------------------------------------------


def _gen():
    """The generation tests' builders (decoders, inputs, onnxruntime/onegraph runners)."""
    from . import test_ms_generation as gen

    return gen


@pytest.mark.parametrize("op", ["GreedySearch", "BeamSearch", "WhisperBeamSearch"])
@pytest.mark.parametrize("attr", ["pad_token_id", "eos_token_id", "decoder_start_token_id"])
def test_generation_token_id_beyond_int32_refused(op, attr):
    # Was: ExecutionError "OverflowError: Python integer ... out of bounds for int32".
    gen = _gen()
    if op == "WhisperBeamSearch":
        inputs = gen._whisper_inputs(9, 2)
        attrs = dict(model_type=2, eos_token_id=9, pad_token_id=0, decoder_start_token_id=10)
        graphs = dict(zip(("encoder", "decoder"), gen.whisper_pair(0, vocab=24)))
        outputs = gen.BEAM_OUTPUTS
    else:
        inputs = (gen._greedy_inputs(gen._PROMPT, 9) if op == "GreedySearch"
                  else gen._beam_inputs(gen._PROMPT, 9, 2))
        attrs = gen._gen_attrs(99, 0)
        graphs = dict(decoder=gen.gpt_decoder(0))
        outputs = [("sequences", gen.I32)]
    attrs[attr] = 2**40
    model = gen._model(op, graphs, inputs, outputs, **attrs)
    with pytest.raises(OpAttributeError, match=f"{op}: {attr} \\(1099511627776\\) does not "
                                               "fit in int32"):
        gen._og(model, inputs)


def test_beam_search_empty_batch_matches_onnxruntime():
    # Was: ValueError "cannot reshape array of size 0 into shape (0,2,11)" for scores.
    gen = _gen()
    inputs = gen._beam_inputs(np.zeros((0, 3), np.int32), 8, 2, 2)
    model = gen._model("BeamSearch", dict(decoder=gen.gpt_decoder(0)), inputs,
                       gen.BEAM_OUTPUTS, **gen._gen_attrs(99, 0))
    want, got = gen._ort(model, inputs), gen._og(model, inputs)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype


# --------------------------------------------------------------------------------------
# MatMulFpQ4 zero-point bytes above 15 (MLAS wraps code - zero point to int8)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("zero_point", [0, 8, 15, 100, 128, 200, 255])
def test_matmul_fpq4_zero_point_byte_as_int8_matches_onnxruntime(zero_point):
    # Was: code - 255 computed as is (onnxruntime wraps it to int8), another product.
    rng = np.random.default_rng(zero_point)
    k, n = 64, 3
    codes = rng.integers(0, 16, (n, 2, 32)).astype(np.uint8)
    blob = np.zeros((n, 2, 21), np.uint8)
    blob[:, :, :4] = rng.uniform(0.01, 0.1, (n, 2, 1)).astype("<f4").view(np.uint8)
    blob[:, :, 4] = zero_point
    blob[:, :, 5:] = codes[:, :, :16] | (codes[:, :, 16:] << 4)
    feeds = {"a": rng.standard_normal((4, k)).astype(np.float32)}
    inits = {"b": blob.reshape(-1), "shape": np.array([k, n], np.int64)}
    model = _model("MatMulFpQ4", feeds, inits, dict(blk_quant_type=1))
    # numpy's product with the weights dequantized as onnxruntime's int8 arithmetic does:
    # code - zero point, wrapped to int8, times the block's scale
    scale = np.ascontiguousarray(blob[:, :, :4]).view("<f4").astype(np.float64)
    wrapped = ((codes.astype(np.int64) - zero_point) % 256).astype(np.uint8).view(np.int8)
    w = (wrapped.astype(np.float64) * scale).reshape(n, k)
    got = onegraph.Session(from_onnx(model)).run(["y0"], feeds)
    np.testing.assert_allclose(got[0], feeds["a"].astype(np.float64) @ w.T, rtol=1e-5,
                               atol=1e-4)
    try:
        _, want = _both(model, feeds)
    except Exception as e:  # noqa: BLE001 - onnxruntime's own error types
        if ort_lacks_kernel(e):  # no MatMulFpQ4 on this CPU (tests/ort_int8.py)
            return
        raise
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-4)


# --------------------------------------------------------------------------------------
# LinearAttention present_state type without past_state
# --------------------------------------------------------------------------------------


def test_linear_attention_float16_without_past_state_matches_onnxruntime():
    # Was: present_state float32 (onnxruntime: float16, query's type).
    rng = np.random.default_rng(5)
    b, t, h, d = 1, 3, 2, 4
    feeds = {n: rng.standard_normal((b, t, h * d)).astype(np.float16) for n in "qkv"}
    model = _model("LinearAttention", feeds, {},
                   dict(q_num_heads=h, kv_num_heads=h, update_rule="linear"), n_out=2)
    got, want = _both(model, feeds, n_out=2)
    inferred = _infer("LinearAttention", list(feeds.values()),
                      dict(q_num_heads=h, kv_num_heads=h, update_rule="linear"))
    for g, w, i in zip(got, want, inferred):
        assert g.dtype == w.dtype == i.dtype == np.float16 and g.shape == w.shape
        np.testing.assert_allclose(g.astype(np.float32), w.astype(np.float32), rtol=2e-3,
                                   atol=2e-3)


@pytest.mark.parametrize("value", [2, -1])
def test_causal_conv_channels_last_not_0_or_1_refused(value):
    # Was: run as channels_last=1 (onnxruntime refuses the node).
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 5, 4)).astype(np.float32)
    w = rng.standard_normal((4, 1, 3)).astype(np.float32)
    with pytest.raises(OpAttributeError, match=f"CausalConvWithState: channels_last must be "
                                               f"0 or 1, got {value}"):
        _kernel("CausalConvWithState", [x, w], dict(channels_last=value))


def test_gated_delta_net_a_log_dt_bias_without_gate_activation_refused():
    # Was: a_log and dt_bias ignored (onnxruntime refuses them without a gate activation).
    rng = np.random.default_rng(7)
    q = rng.standard_normal((4, 2, 8)).astype(np.float32)
    v = rng.standard_normal((4, 2, 6)).astype(np.float32)
    cu = np.array([0, 1, 4], np.int32)
    decay = -rng.random((4, 2)).astype(np.float32)
    inputs = [q, q, v, cu, decay, None, None, np.zeros(2, np.float32),
              np.zeros(2, np.float32)]
    attrs = dict(update_rule="gated", gate_activation="none")
    with pytest.raises(ShapeError, match="GatedDeltaNet: a_log and dt_bias need "
                                         "gate_activation softplus or sigmoid"):
        _kernel("GatedDeltaNet", inputs, attrs)

"""onnxruntime's text-generation contrib ops (`ops/ms_generation.py`: GreedySearch,
BeamSearch, Sampling, WhisperBeamSearch) against onnxruntime.

The oracle is onnxruntime's CPUExecutionProvider running the same one-node model. The
subgraphs are tiny models built here with onnx.helper, in the layouts
convert_generation writes: a GPT-2 style decoder (token and position embeddings, one
or two attention layers whose keys/values accumulate in past_i / present_i of shape
(2, batch, 1, length, D), the attention mask as an additive bias, a MatMul to the
vocabulary) and a T5-style encoder/decoder pair (encoder: hidden states, the decoder's
first self key/value and the cross key/value per layer, logits of the start token;
decoder: self attention over its past, cross attention over the encoder's keys with
the encoder mask). Vocabularies of 11-50 tokens, seeded random weights.

Sequences are compared exactly; sequences_scores and scores with rtol = atol = 5e-5
(TOL; measured max error 5.7e-6 on sequences_scores, 4.3e-4 absolute / 2.5e-5 of
1 + |y| on scores up to 310 in magnitude: the decoder subgraphs' own float32 ops already
differ by ~1e-7 relative between onnxruntime and onegraph, and the running beam scores
add those differences up step after step).
onnxruntime leaves output memory unwritten where the loop stopped early (the tail of
GreedySearch's sequences once every row met eos, the steps of BeamSearch's `scores`
after every batch entry was done; probed: it holds leftovers such as 46 or -1), so
those parts are compared only where onnxruntime wrote them; onegraph writes
pad_token_id / zeros there, checked here. The early-stop greedy cases mask the pad
token with vocab_mask, so a pad after the prompt marks where a row ended.
onnxruntime 1.32's BeamSearch needs the min_length input although its schema makes it
optional (its kernel checks input 2 as required), so the BeamSearch models pass it.

WhisperBeamSearch: a Whisper-layout pair (encoder over float features (2, 3, 5) and the
forced prompt, returning the prompt's logits, hidden states, self and cross key/value;
decoder as the T5 one without the encoder mask), vocabularies of 11-80, with and without
decoder_input_ids, temperature and the timestamp rules (logits_processor=1) with
Whisper's token order and another. Same TOL; measured max error 9.5e-7 on
sequences_scores, 1.5e-5 absolute (1.4e-6 of 1 + |y|, |y| up to 162) on scores. The
decoders take encoder_hidden_states without reading it: onnxruntime's CPU kernel feeds
that input a buffer it never writes (probed: decoders reading it disagree), onegraph
the encoder's hidden states.

Sampling draws with onnxruntime's std::default_random_engine, which cannot be
reproduced: the cases where top_p leaves one candidate per row are compared exactly;
otherwise the distribution of 4000 draws is checked, for onegraph and for onnxruntime
alike, against the top-p renormalised softmax computed here in float64 (every drawn
token inside the top-p set, each token's frequency within 5 standard deviations).
"""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import (OneGraphError, OpAttributeError, ShapeError,  # noqa: E402
                             UnsupportedOpError)
from onegraph.ops import REGISTRY, TensorInfo  # noqa: E402

MS = "com.microsoft"
F, I32 = TensorProto.FLOAT, TensorProto.INT32
TOL = dict(rtol=5e-5, atol=5e-5)
BEAM_OUTPUTS = [("sequences", I32), ("sequences_scores", F), ("scores", F)]


# --------------------------------------------------------------------------------------
# Subgraph builders
# --------------------------------------------------------------------------------------


def _c(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def _randn(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _mask_bias(nodes, inits, mask):
    """'bias' (B, 1, T) = (1 - mask) * -1e4 and 'maskf' (B, T) from an int32 mask."""
    inits += [_c("neg", np.float32(-1e4)), _c("one", np.float32(1)),
              _c("ax1", np.array([1], np.int64))]
    nodes += [helper.make_node("Cast", [mask], ["maskf"], to=F),
              helper.make_node("Sub", ["one", "maskf"], ["inv"]),
              helper.make_node("Mul", ["inv", "neg"], ["bias2"]),
              helper.make_node("Unsqueeze", ["bias2", "ax1"], ["bias"])]


def gpt_decoder(seed=0, vocab=11, d=4, layers=1, name="decoder", extra_inputs=(),
                wrap_ids=False):
    """A GPT-2 style decoder: input_ids, position_ids, attention_mask, past_i (2, B, 1,
    P, d) -> logits (B, S, vocab), present_i (2, B, 1, P + S, d). Every query attends to
    every unmasked key (no causal mask: any function of the inputs will do). `wrap_ids`:
    ids are taken modulo vocab (so a pad id past the vocabulary can be fed)."""
    rng = np.random.default_rng(seed)
    inits = [_c("E", _randn(rng, vocab, d)), _c("Pe", _randn(rng, 64, d)),
             _c("Wout", _randn(rng, d, vocab)), _c("ax0", np.array([0], np.int64)),
             _c("ax2", np.array([2], np.int64)), _c("i0", np.array(0, np.int64)),
             _c("i1", np.array(1, np.int64))]
    ids = "input_ids"
    nodes = []
    if wrap_ids:
        inits.append(_c("vocab", np.array(vocab, np.int32)))
        nodes.append(helper.make_node("Mod", ["input_ids", "vocab"], ["ids_mod"]))
        ids = "ids_mod"
    nodes += [helper.make_node("Gather", ["E", ids], ["emb"]),
             helper.make_node("Gather", ["Pe", "position_ids"], ["pemb"]),
             helper.make_node("Add", ["emb", "pemb"], ["h0"])]
    _mask_bias(nodes, inits, "attention_mask")
    ins = [helper.make_tensor_value_info("input_ids", I32, ["b", "s"]),
           helper.make_tensor_value_info("position_ids", I32, ["b", "s"]),
           helper.make_tensor_value_info("attention_mask", I32, ["b", "t"])]
    outs = [helper.make_tensor_value_info("logits", F, ["b", "s", vocab])]
    h = "h0"
    for k in range(layers):
        inits += [_c(f"Wk{k}", _randn(rng, d, d)), _c(f"Wv{k}", _randn(rng, d, d))]
        ins.append(helper.make_tensor_value_info(f"past_{k}", F, [2, "b", 1, "p", d]))
        outs.append(helper.make_tensor_value_info(f"present_{k}", F, [2, "b", 1, "t", d]))
        nodes += [
            helper.make_node("MatMul", [h, f"Wk{k}"], [f"k{k}"]),
            helper.make_node("MatMul", [h, f"Wv{k}"], [f"v{k}"]),
            helper.make_node("Unsqueeze", [f"k{k}", "ax0"], [f"k{k}a"]),
            helper.make_node("Unsqueeze", [f"v{k}", "ax0"], [f"v{k}a"]),
            helper.make_node("Concat", [f"k{k}a", f"v{k}a"], [f"kv{k}"], axis=0),
            helper.make_node("Unsqueeze", [f"kv{k}", "ax2"], [f"kv{k}b"]),
            helper.make_node("Concat", [f"past_{k}", f"kv{k}b"], [f"present_{k}"], axis=3),
            helper.make_node("Gather", [f"present_{k}", "i0"], [f"K{k}s"], axis=0),
            helper.make_node("Gather", [f"present_{k}", "i1"], [f"V{k}s"], axis=0),
            helper.make_node("Squeeze", [f"K{k}s", "ax1"], [f"K{k}"]),
            helper.make_node("Squeeze", [f"V{k}s", "ax1"], [f"V{k}"]),
            helper.make_node("Transpose", [f"K{k}"], [f"Kt{k}"], perm=[0, 2, 1]),
            helper.make_node("MatMul", [h, f"Kt{k}"], [f"sc{k}"]),
            helper.make_node("Add", [f"sc{k}", "bias"], [f"scm{k}"]),
            helper.make_node("Softmax", [f"scm{k}"], [f"pr{k}"], axis=-1),
            helper.make_node("MatMul", [f"pr{k}", f"V{k}"], [f"ctx{k}"]),
            helper.make_node("Add", [h, f"ctx{k}"], [f"h{k + 1}"])]
        h = f"h{k + 1}"
    nodes.append(helper.make_node("MatMul", [h, "Wout"], ["logits"]))
    ins += [helper.make_tensor_value_info(n, I32, [1]) for n in extra_inputs]
    return helper.make_graph(nodes, name, ins, outs, inits)


def _encoder_presents(nodes, inits, W, layers, d, self_length):
    """Append an encoder's present key/value nodes (self from "x", cross from
    "encoder_hidden_states", per layer) and return their output value infos by kind;
    the self presents are `self_length` long."""
    outs = {"self": [], "cross": []}
    for k in range(layers):
        for kind, src in (("self", "x"), ("cross", "encoder_hidden_states")):
            for kv in ("key", "value"):
                n = f"present_{kv}_{kind}_{k}"
                inits.append(_c(f"W_{kind}_{kv}_{k}", W[kind, kv, k]))
                nodes += [helper.make_node("MatMul", [src, f"W_{kind}_{kv}_{k}"], [n + "3"]),
                          helper.make_node("Unsqueeze", [n + "3", "ax1"], [n])]
                outs[kind].append(helper.make_tensor_value_info(
                    n, F, ["b", 1, self_length if kind == "self" else "s", d]))
    return outs


def _decoder_with_pasts(nodes, inits, ins, W, layers, d, vocab, query, att_seed):
    """The rest of an encoder-decoder's decoder graph after its input nodes: per layer
    self key/value pasts extended by this step's token (the presents) and cross
    key/value pasts from the encoder, then attention on layer 0 and the logits."""
    pasts = {"self": [], "cross": []}
    d_outs = [helper.make_tensor_value_info("logits", F, ["b", 1, vocab])]
    for k in range(layers):
        for kv in ("key", "value"):
            for kind in ("self", "cross"):
                pasts[kind].append(helper.make_tensor_value_info(
                    f"past_{kv}_{kind}_{k}", F, ["b", 1, "p" if kind == "self" else "s", d]))
            d_outs.append(helper.make_tensor_value_info(f"present_{kv}_self_{k}", F,
                                                        ["b", 1, "p1", d]))
            inits.append(_c(f"W_self_{kv}_{k}", W["self", kv, k]))
            nodes += [helper.make_node("MatMul", ["x", f"W_self_{kv}_{k}"], [f"n_{kv}{k}3"]),
                      helper.make_node("Unsqueeze", [f"n_{kv}{k}3", "ax1"], [f"n_{kv}{k}"]),
                      helper.make_node("Concat", [f"past_{kv}_self_{k}", f"n_{kv}{k}"],
                                       [f"present_{kv}_self_{k}"], axis=2)]
    _attend(nodes, inits, np.random.default_rng(att_seed), query,
            ("present_key_self_0", "present_value_self_0"),
            ("past_key_cross_0", "past_value_cross_0"), d, vocab)
    return helper.make_graph(nodes, "decoder", ins + pasts["self"] + pasts["cross"],
                             d_outs, inits)


def _attend(nodes, inits, rng, x, self_kv, cross_kv, d, vocab):
    """logits = (x + softmax(q Ks^T) Vs + softmax(q Kc^T + bias) Vc) W, keys (B, 1, T, d)."""
    inits += [_c("Wq", _randn(rng, d, d)), _c("Wout", _randn(rng, d, vocab))]
    nodes.append(helper.make_node("MatMul", [x, "Wq"], ["q"]))
    h = x
    for tag, (k, v), bias in (("s", self_kv, None), ("c", cross_kv, "bias")):
        nodes += [helper.make_node("Squeeze", [k, "ax1"], [tag + "K"]),
                  helper.make_node("Squeeze", [v, "ax1"], [tag + "V"]),
                  helper.make_node("Transpose", [tag + "K"], [tag + "Kt"], perm=[0, 2, 1]),
                  helper.make_node("MatMul", ["q", tag + "Kt"], [tag + "sc"])]
        sc = tag + "sc"
        if bias:
            nodes.append(helper.make_node("Add", [sc, bias], [sc + "b"]))
            sc += "b"
        nodes += [helper.make_node("Softmax", [sc], [tag + "pr"], axis=-1),
                  helper.make_node("MatMul", [tag + "pr", tag + "V"], [tag + "ctx"]),
                  helper.make_node("Add", [h, tag + "ctx"], [tag + "h"])]
        h = tag + "h"
    nodes.append(helper.make_node("MatMul", [h, "Wout"], ["logits"]))


def t5_pair(seed=0, vocab=11, d=4, layers=1, hidden_input=True, use_hidden=False,
            sequence_input=False):
    """(encoder, decoder) graphs in onnxruntime's encoder-decoder layout. `use_hidden`:
    the decoder's query also reads encoder_hidden_states; `sequence_input`: the decoder
    takes the whole sequence as input_ids and mixes in the mean of its embeddings."""
    rng = np.random.default_rng(seed)
    E, Ed = _randn(rng, vocab, d), _randn(rng, vocab, d)
    W = {(kind, kv, k): _randn(rng, d, d) for kind in ("self", "cross")
         for kv in ("key", "value") for k in range(layers)}
    att_seed = int(rng.integers(1 << 30))
    # encoder
    nodes, inits = [], [_c("E", E), _c("Ed", Ed), _c("axm1", np.array([-1], np.int64))]
    _mask_bias(nodes, inits, "encoder_attention_mask")
    nodes += [helper.make_node("Gather", ["E", "encoder_input_ids"], ["emb"]),
              helper.make_node("Unsqueeze", ["maskf", "axm1"], ["maskf3"]),
              helper.make_node("Mul", ["emb", "maskf3"], ["encoder_hidden_states"]),
              helper.make_node("Gather", ["Ed", "decoder_input_ids"], ["x"])]
    outs = _encoder_presents(nodes, inits, W, layers, d, 1)
    _attend(nodes, inits, np.random.default_rng(att_seed), "x",
            ("present_key_self_0", "present_value_self_0"),
            ("present_key_cross_0", "present_value_cross_0"), d, vocab)
    encoder = helper.make_graph(
        nodes, "encoder",
        [helper.make_tensor_value_info("encoder_input_ids", I32, ["b", "s"]),
         helper.make_tensor_value_info("encoder_attention_mask", I32, ["b", "s"]),
         helper.make_tensor_value_info("decoder_input_ids", I32, ["b", 1])],
        [helper.make_tensor_value_info("logits", F, ["b", 1, vocab]),
         helper.make_tensor_value_info("encoder_hidden_states", F, ["b", "s", d])]
        + outs["self"] + outs["cross"], inits)
    # decoder
    nodes, inits = [], [_c("Ed", Ed)]
    _mask_bias(nodes, inits, "encoder_attention_mask")
    ins = [helper.make_tensor_value_info("input_ids", I32, ["b", "t" if sequence_input
                                                            else 1]),
           helper.make_tensor_value_info("encoder_attention_mask", I32, ["b", "s"])]
    if hidden_input:
        ins.append(helper.make_tensor_value_info("encoder_hidden_states", F, ["b", "s", d]))
    ids = "input_ids"
    if sequence_input:
        inits += [_c("last", np.array([-1], np.int64)), _c("end", np.array([1 << 31], np.int64))]
        nodes += [helper.make_node("Slice", ["input_ids", "last", "end", "ax1"], ["ids1"]),
                  helper.make_node("Gather", ["Ed", "input_ids"], ["all_emb"]),
                  helper.make_node("ReduceMean", ["all_emb"], ["seq_mean"], axes=[1])]
        ids = "ids1"
    nodes.append(helper.make_node("Gather", ["Ed", ids], ["x"]))
    query = "x"
    if use_hidden:
        nodes += [helper.make_node("ReduceMean", ["encoder_hidden_states"], ["hm"], axes=[1]),
                  helper.make_node("Add", [query, "hm"], ["xh"])]
        query = "xh"
    if sequence_input:
        nodes.append(helper.make_node("Add", [query, "seq_mean"], ["xs"]))
        query = "xs"
    return encoder, _decoder_with_pasts(nodes, inits, ins, W, layers, d, vocab, query,
                                        att_seed)


def whisper_pair(seed=0, vocab=11, d=4, feat=3, layers=1, hidden_input=True,
                 use_hidden=False):
    """(encoder, decoder) graphs in onnxruntime's Whisper layout. The encoder takes float
    features (B, feat, frames) and the forced decoder_input_ids (B, L): hidden states are
    features^T W, the logits (B, L, vocab) come from attention of the prompt embeddings
    over themselves and the hidden states; it returns the self key/value of the prompt
    and the cross key/value per layer. The decoder takes one token, [encoder_hidden_states],
    the self then cross pasts, and returns logits and the grown self presents."""
    rng = np.random.default_rng(seed)
    Wf, Ed = _randn(rng, feat, d), _randn(rng, vocab, d)
    W = {(kind, kv, k): _randn(rng, d, d) for kind in ("self", "cross")
         for kv in ("key", "value") for k in range(layers)}
    att_seed = int(rng.integers(1 << 30))
    zero_bias = [_c("bias", np.zeros(1, np.float32)), _c("ax1", np.array([1], np.int64))]
    nodes, inits = [], [_c("Wf", Wf), _c("Ed", Ed)] + zero_bias
    nodes += [helper.make_node("Transpose", ["encoder_input_ids"], ["ft"], perm=[0, 2, 1]),
              helper.make_node("MatMul", ["ft", "Wf"], ["encoder_hidden_states"]),
              helper.make_node("Gather", ["Ed", "decoder_input_ids"], ["x"])]
    outs = _encoder_presents(nodes, inits, W, layers, d, "l")
    _attend(nodes, inits, np.random.default_rng(att_seed), "x",
            ("present_key_self_0", "present_value_self_0"),
            ("present_key_cross_0", "present_value_cross_0"), d, vocab)
    encoder = helper.make_graph(
        nodes, "encoder",
        [helper.make_tensor_value_info("encoder_input_ids", F, ["b", feat, "s"]),
         helper.make_tensor_value_info("decoder_input_ids", I32, ["b", "l"])],
        [helper.make_tensor_value_info("logits", F, ["b", "l", vocab]),
         helper.make_tensor_value_info("encoder_hidden_states", F, ["b", "s", d])]
        + outs["self"] + outs["cross"], inits)
    nodes, inits = [], [_c("Ed", Ed)] + zero_bias
    ins = [helper.make_tensor_value_info("input_ids", I32, ["b", 1])]
    if hidden_input:
        ins.append(helper.make_tensor_value_info("encoder_hidden_states", F, ["b", "s", d]))
    nodes.append(helper.make_node("Gather", ["Ed", "input_ids"], ["x"]))
    query = "x"
    if use_hidden:
        nodes += [helper.make_node("ReduceMean", ["encoder_hidden_states"], ["hm"], axes=[1]),
                  helper.make_node("Add", [query, "hm"], ["xh"])]
        query = "xh"
    return encoder, _decoder_with_pasts(nodes, inits, ins, W, layers, d, vocab, query,
                                        att_seed)


# --------------------------------------------------------------------------------------
# Models and runners
# --------------------------------------------------------------------------------------


def _model(op, graphs, inputs, outputs, **attrs):
    """One `op` node; inputs: (name, array or None) in the op's order, None omitted."""
    names, graph_inputs = [], []
    for name, value in inputs:
        if value is None:
            names.append("")
            continue
        value = np.asarray(value)
        names.append(name)
        graph_inputs.append(helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(value.dtype), list(value.shape)))
    while names and names[-1] == "":
        names.pop()
    node = helper.make_node(op, names, [o for o, _ in outputs], domain=MS, **graphs,
                            **attrs)
    graph = helper.make_graph([node], op, graph_inputs,
                              [helper.make_tensor_value_info(o, t, None) for o, t in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(MS, 1)], ir_version=9)


def _feeds(inputs):
    return {k: np.asarray(v) for k, v in inputs if v is not None}


def _ort(model, inputs):
    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return session.run(None, _feeds(inputs))


def _og(model, inputs):
    return onegraph.Session(from_onnx(model)).run([o.name for o in model.graph.output],
                                                  _feeds(inputs))


def _i32(*values):
    return np.array(values, np.int32)


def _greedy_inputs(ids, max_length, min_length=None, repetition_penalty=None,
                   vocab_mask=None, prefix_vocab_mask=None, attention_mask=None):
    return [("input_ids", ids), ("max_length", _i32(max_length)),
            ("min_length", None if min_length is None else _i32(min_length)),
            ("repetition_penalty", None if repetition_penalty is None
             else np.array([repetition_penalty], np.float32)),
            ("vocab_mask", vocab_mask), ("prefix_vocab_mask", prefix_vocab_mask),
            ("attention_mask", attention_mask)]


def _beam_inputs(ids, max_length, beams, ret=1, min_length=0, length_penalty=1.0,
                 repetition_penalty=None, vocab_mask=None, prefix_vocab_mask=None,
                 attention_mask=None):
    return [("input_ids", ids), ("max_length", _i32(max_length)),
            ("min_length", _i32(min_length)), ("num_beams", _i32(beams)),
            ("num_return_sequences", _i32(ret)),
            ("length_penalty", np.array([length_penalty], np.float32)),
            ("repetition_penalty", None if repetition_penalty is None
             else np.array([repetition_penalty], np.float32)),
            ("vocab_mask", vocab_mask), ("prefix_vocab_mask", prefix_vocab_mask),
            ("attention_mask", attention_mask)]


def _written(sequences, prompt, pad):
    """How many positions of greedy output onnxruntime wrote: up to the step at which the
    last row ended (its first pad after the prompt; pad is never generated here)."""
    ends = []
    for row in sequences:
        after = np.nonzero(row[prompt:] == pad)[0]
        if after.size == 0:
            return sequences.shape[1]
        ends.append(prompt + after[0] + 1)
    return max(ends)


def _check_greedy(model, inputs, pad=None):
    (want,), (got,) = _ort(model, inputs), _og(model, inputs)
    assert got.dtype == np.int32 and got.shape == want.shape
    if pad is None:
        np.testing.assert_array_equal(got, want)
    else:
        n = _written(got, np.asarray(inputs[0][1]).shape[1], pad)
        np.testing.assert_array_equal(got[:, :n], want[:, :n])
        assert (got[:, n:] == pad).all()
    return got


def _check_beam(model, inputs):
    want, got = _ort(model, inputs), _og(model, inputs)
    assert len(got) == len(want)
    np.testing.assert_array_equal(got[0], want[0])
    if len(got) > 1:
        np.testing.assert_allclose(got[1], want[1], **TOL)
    if len(got) > 2:
        assert got[2].shape == want[2].shape
        steps = int(np.any(got[2] != 0, axis=(1, 2, 3)).sum())
        assert not got[2][steps:].any()  # where onnxruntime leaves memory unwritten
        np.testing.assert_allclose(got[2][:steps], want[2][:steps], **TOL)
    return got


def _gen_attrs(eos, pad, **more):
    return dict(eos_token_id=eos, pad_token_id=pad, **more)


# --------------------------------------------------------------------------------------
# GreedySearch
# --------------------------------------------------------------------------------------

_PROMPT = np.array([[1, 2, 3, 4], [0, 0, 5, 6], [0, 7, 8, 9]], np.int32)  # pad 0 on the left


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("layers", [1, 2])
def test_greedy_search(seed, layers):
    model = _model("GreedySearch", dict(decoder=gpt_decoder(seed, layers=layers)),
                   _greedy_inputs(_PROMPT, 10), [("sequences", I32)], **_gen_attrs(99, 0))
    _check_greedy(model, _greedy_inputs(_PROMPT, 10))


@pytest.mark.parametrize("seed", range(3))
def test_greedy_search_processors(seed):
    """repetition_penalty, no_repeat_ngram_size, min_length, vocab_mask and the
    first-step prefix_vocab_mask together, on a 50-token vocabulary."""
    rng = np.random.default_rng(seed)
    vocab = 50
    vm = np.ones(vocab, np.int32)
    vm[rng.choice(vocab, 10, replace=False)] = 0
    pm = (rng.random((3, vocab)) < 0.5).astype(np.int32)
    vm[0], vm[20] = 0, 1  # pad masked: a pad after the prompt marks an ended row
    pm[:, 20] = 1  # one token the first step may take
    ids = np.array([[11, 12, 13, 14], [0, 0, 15, 16], [0, 17, 18, 19]], np.int32)
    for ngram, rep in ((2, 1.7), (1, 0.6), (3, 1.0)):
        inputs = _greedy_inputs(ids, 14, 9, rep, vm, pm)
        model = _model("GreedySearch", dict(decoder=gpt_decoder(seed, vocab=vocab, d=6)),
                       inputs, [("sequences", I32)],
                       **_gen_attrs(3, 0, no_repeat_ngram_size=ngram))
        got = _check_greedy(model, inputs, pad=0)
        assert not np.isin(got[:, 4:], np.nonzero(vm[1:] == 0)[0] + 1).any()


def test_greedy_search_attention_mask_and_positions():
    """A given attention_mask replaces the pad-derived one; positions still count the
    non-pad tokens."""
    mask = np.array([[1, 0, 1, 1], [0, 0, 1, 1], [1, 1, 1, 1]], np.int32)
    inputs = _greedy_inputs(_PROMPT, 9, attention_mask=mask)
    model = _model("GreedySearch", dict(decoder=gpt_decoder(5, layers=2)), inputs,
                   [("sequences", I32)], **_gen_attrs(99, 0))
    _check_greedy(model, inputs)


@pytest.mark.parametrize("seed", range(6))
def test_greedy_search_eos(seed):
    """Rows that meet eos continue with pad (not eos); the loop stops once all rows
    have. Pad (10) is masked so it only marks ended rows."""
    vm = np.ones(11, np.int32)
    vm[10] = 0
    ids = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    for eos in range(6):
        inputs = _greedy_inputs(ids, 12, vocab_mask=vm)
        model = _model("GreedySearch", dict(decoder=gpt_decoder(seed)), inputs,
                       [("sequences", I32)], **_gen_attrs(eos, 10))
        _check_greedy(model, inputs, pad=10)


def test_greedy_search_all_rows_end_at_once():
    pm = np.zeros((2, 11), np.int32)
    pm[:, 7] = 1  # the first step can only choose eos 7
    vm = np.ones(11, np.int32)
    vm[10] = 0
    inputs = _greedy_inputs(np.array([[1, 2], [3, 4]], np.int32), 8, vocab_mask=vm,
                            prefix_vocab_mask=pm)
    model = _model("GreedySearch", dict(decoder=gpt_decoder(1)), inputs,
                   [("sequences", I32)], **_gen_attrs(7, 10))
    got = _check_greedy(model, inputs, pad=10)
    np.testing.assert_array_equal(got, [[1, 2] + [10] * 6, [3, 4] + [10] * 6])


def test_greedy_search_init_decoder():
    """init_decoder runs the first step, decoder the rest (different weights here)."""
    inputs = _greedy_inputs(_PROMPT, 10)
    model = _model("GreedySearch", dict(decoder=gpt_decoder(2),
                                        init_decoder=gpt_decoder(3, name="init")),
                   inputs, [("sequences", I32)], **_gen_attrs(99, 0))
    _check_greedy(model, inputs)


def test_greedy_search_outer_scope_and_round_trip():
    """A decoder reading a main-graph value (onnxruntime's implicit input), and the
    model written back by to_onnx running in onnxruntime."""
    dec = gpt_decoder(4)
    dec.initializer.remove(next(t for t in dec.initializer if t.name == "Wout"))
    inputs = _greedy_inputs(_PROMPT, 9)
    model = _model("GreedySearch", dict(decoder=dec), inputs, [("sequences", I32)],
                   **_gen_attrs(99, 0))
    w = np.random.default_rng(9).standard_normal((4, 11)).astype(np.float32)
    model.graph.initializer.append(_c("Wout", w))
    got = _check_greedy(model, inputs)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "greedy.onnx")
        to_onnx(from_onnx(model), path)
        back = onnx.load(path)
    np.testing.assert_array_equal(_ort(back, inputs)[0], got)


# --------------------------------------------------------------------------------------
# BeamSearch, GPT-2 decoder (model_type 0)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("beams,ret", [(1, 1), (2, 2), (3, 2), (4, 1)])
def test_beam_search(seed, beams, ret):
    """No eos reachable (eos outside the vocabulary): every step's scores compared."""
    inputs = _beam_inputs(_PROMPT, 9, beams, ret)
    model = _model("BeamSearch", dict(decoder=gpt_decoder(seed, layers=1 + seed % 2)),
                   inputs, BEAM_OUTPUTS, **_gen_attrs(99, 0))
    got = _check_beam(model, inputs)
    assert got[0].shape == (3, ret, 9) and got[2].shape == (5, 3, beams, 11)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("early_stopping", [0, 1])
@pytest.mark.parametrize("length_penalty", [0.6, 1.0, 1.8])
def test_beam_search_eos(seed, early_stopping, length_penalty):
    """eos among the likely tokens: finished hypotheses, length penalty, done batch
    entries (padded from row 0), early stops."""
    ids = np.array([[1, 2, 3], [0, 4, 5]], np.int32)
    for eos in (0, 3, 6):
        inputs = _beam_inputs(ids, 10, 3, 2, length_penalty=length_penalty)
        model = _model("BeamSearch", dict(decoder=gpt_decoder(seed)), inputs, BEAM_OUTPUTS,
                       **_gen_attrs(eos, 0, early_stopping=early_stopping))
        _check_beam(model, inputs)


@pytest.mark.parametrize("seed", range(3))
def test_beam_search_processors(seed):
    rng = np.random.default_rng(seed + 10)
    vocab = 40
    vm = np.ones(vocab, np.int32)
    vm[rng.choice(vocab, 8, replace=False)] = 0
    vm[5] = 1
    pm = (rng.random((3, vocab)) < 0.6).astype(np.int32)
    ids = np.array([[11, 12, 13, 14], [0, 0, 15, 16], [0, 17, 18, 19]], np.int32)
    for ngram, rep, min_len in ((2, 1.5, 8), (1, 0.7, 0), (3, 1.0, 11)):
        inputs = _beam_inputs(ids, 13, 3, 3, min_len, 1.2, rep, vm, pm)
        model = _model("BeamSearch", dict(decoder=gpt_decoder(seed, vocab=vocab, d=6)),
                       inputs, BEAM_OUTPUTS[:2],
                       **_gen_attrs(5, 0, no_repeat_ngram_size=ngram))
        _check_beam(model, inputs)


def test_beam_search_attention_mask_init_decoder_and_optional_outputs():
    mask = np.array([[1, 0, 1, 1], [0, 0, 1, 1], [1, 1, 1, 1]], np.int32)
    inputs = _beam_inputs(_PROMPT, 9, 3, 2, attention_mask=mask)
    graphs = dict(decoder=gpt_decoder(6, layers=2),
                  init_decoder=gpt_decoder(7, layers=2, name="init"))
    for outputs in (BEAM_OUTPUTS[:1], BEAM_OUTPUTS[:2], BEAM_OUTPUTS):
        model = _model("BeamSearch", graphs, inputs, outputs, **_gen_attrs(3, 0))
        _check_beam(model, inputs)


def test_beam_search_vocab_50():
    ids = np.array([[5, 6, 7, 8, 9], [0, 0, 0, 11, 12]], np.int32)
    inputs = _beam_inputs(ids, 12, 4, 3, length_penalty=0.8)
    model = _model("BeamSearch", dict(decoder=gpt_decoder(8, vocab=50, d=8, layers=2)),
                   inputs, BEAM_OUTPUTS, **_gen_attrs(2, 0))
    _check_beam(model, inputs)


# --------------------------------------------------------------------------------------
# BeamSearch, encoder-decoder (model_type 1)
# --------------------------------------------------------------------------------------

_T5_IDS = np.array([[1, 2, 3, 4], [0, 0, 4, 5], [6, 7, 0, 8]], np.int32)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("variant", [
    dict(), dict(hidden_input=False), dict(use_hidden=True), dict(sequence_input=True),
    dict(layers=2), dict(layers=2, use_hidden=True, sequence_input=True)])
def test_beam_search_encoder_decoder(seed, variant):
    inputs = _beam_inputs(_T5_IDS, 8, 3, 2)
    encoder, decoder = t5_pair(seed, **variant)
    model = _model("BeamSearch", dict(encoder=encoder, decoder=decoder), inputs,
                   BEAM_OUTPUTS, **_gen_attrs(10, 0, decoder_start_token_id=2, model_type=1))
    got = _check_beam(model, inputs)
    assert (got[0][:, :, 0] == 2).all() and got[2].shape == (7, 3, 3, 11)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("early_stopping", [0, 1])
def test_beam_search_encoder_decoder_eos(seed, early_stopping):
    """eos reachable, a given attention_mask (inner zero: the encoder mask is what the
    caller says), repetition penalty, ngrams, min_length, the first-step prefix mask
    (applied to the encoder's logits)."""
    mask = (_T5_IDS != 0).astype(np.int32)
    pm = np.ones((3, 11), np.int32)
    pm[:, 4] = 0
    for eos in (3, 4, 8):
        inputs = _beam_inputs(_T5_IDS, 9, 4, 2, 3, 1.3, 1.4, None, pm,
                              mask if seed % 2 else None)
        model = _model("BeamSearch", dict(zip(("encoder", "decoder"), t5_pair(seed))),
                       inputs, BEAM_OUTPUTS,
                       **_gen_attrs(eos, 0, decoder_start_token_id=1, model_type=1,
                                    early_stopping=early_stopping, no_repeat_ngram_size=2))
        _check_beam(model, inputs)


# --------------------------------------------------------------------------------------
# Sampling
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("custom", [0, 1])
def test_sampling_single_candidate(seed, custom):
    """top_p so small that one token survives per row: no randomness, onnxruntime's
    draws are the oracle (with temperature, repetition penalty and a presence mask)."""
    rng = np.random.default_rng(seed)
    presence = (rng.random((3, 11)) < 0.3).astype(np.int32)
    inputs = _greedy_inputs(_PROMPT, 11, 0, 1.3) + [("presence_mask", presence),
                                                   ("seed", _i32(seed))]
    model = _model("Sampling", dict(decoder=gpt_decoder(seed)), inputs, [("sequences", I32)],
                   **_gen_attrs(99, 0, top_p=1e-4, temperature=0.7, custom=custom,
                                presence_penalty=0.5))
    _check_greedy(model, inputs)


def _top_p_distribution(logits, top_p, temperature):
    """The renormalised top-p softmax (HF TopPLogitsWarper), in float64."""
    z = logits.astype(np.float64) / temperature
    probs = np.exp(z - z.max())
    probs /= probs.sum()
    order = np.argsort(probs)
    cum = np.cumsum(probs[order])
    keep = np.ones_like(probs, bool)
    keep[order[cum <= 1 - top_p]] = False
    out = np.where(keep, probs, 0)
    return out / out.sum()


@pytest.mark.parametrize("top_p,temperature", [(0.7, 4.0), (0.9, 6.0)])
def test_sampling_distribution(top_p, temperature):
    """4000 rows of one prompt, one step: onegraph's and onnxruntime's draws both follow
    the top-p distribution of the decoder's logits."""
    n = 4000
    dec = gpt_decoder(0)
    ids = np.tile(np.array([[1, 2, 3]], np.int32), (n, 1))
    inputs = _greedy_inputs(ids, 4) + [("presence_mask", None), ("seed", _i32(7))]
    model = _model("Sampling", dict(decoder=dec), inputs, [("sequences", I32)],
                   **_gen_attrs(99, 0, top_p=top_p, temperature=temperature))
    # the decoder's logits for the prompt, from onnxruntime
    single = helper.make_model(dec, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    logits = _ort(single, [("input_ids", ids[:1]), ("position_ids", _i32([0, 1, 2])),
                           ("attention_mask", _i32([1, 1, 1])),
                           ("past_0", np.zeros((2, 1, 1, 0, 4), np.float32))])[0][0, -1]
    expected = _top_p_distribution(logits, top_p, temperature)
    assert (expected > 0).sum() > 1  # a real draw
    for draws in (_og(model, inputs)[0][:, 3], _ort(model, inputs)[0][:, 3]):
        counts = np.bincount(draws, minlength=11)
        assert not counts[expected == 0].any()
        sigma = np.sqrt(n * expected * (1 - expected)) + 1
        assert (np.abs(counts - n * expected) < 5 * sigma).all(), (counts, n * expected)


def test_sampling_seed_repeats():
    inputs = _greedy_inputs(_PROMPT, 9) + [("presence_mask", None), ("seed", _i32(3))]
    model = _model("Sampling", dict(decoder=gpt_decoder(1)), inputs, [("sequences", I32)],
                   **_gen_attrs(10, 0, top_p=0.9))
    np.testing.assert_array_equal(_og(model, inputs)[0], _og(model, inputs)[0])


# --------------------------------------------------------------------------------------
# Refusals, errors and inference
# --------------------------------------------------------------------------------------


def _raises(model, inputs, error, match):
    with pytest.raises(error, match=match):
        _og(model, inputs)


def test_refusals():
    g = _greedy_inputs(_PROMPT, 9)
    b = _beam_inputs(_PROMPT, 9, 2)
    enc, dec = t5_pair(0)
    _raises(_model("GreedySearch", dict(decoder=dec, encoder=enc), g, [("sequences", I32)],
                   **_gen_attrs(10, 0, model_type=1)), g, UnsupportedOpError, "model_type=1")
    _raises(_model("BeamSearch", dict(decoder=gpt_decoder()), b, BEAM_OUTPUTS[:1],
                   **_gen_attrs(10, 0, model_type=2)), b, UnsupportedOpError, "model_type=2")
    shared = gpt_decoder(extra_inputs=("past_sequence_length",))
    _raises(_model("GreedySearch", dict(decoder=shared), g, [("sequences", I32)],
                   **_gen_attrs(10, 0)), g, UnsupportedOpError, "past_sequence_length")
    s = g + [("presence_mask", None), ("seed", None)]
    _raises(_model("Sampling", dict(decoder=gpt_decoder()), s, [("sequences", I32)],
                   **_gen_attrs(10, 0)), s, UnsupportedOpError, "top_p=0")
    with_dec_ids = b + [("decoder_input_ids", _i32([[1], [1], [1]]))]
    _raises(_model("BeamSearch", dict(decoder=gpt_decoder()), with_dec_ids,
                   BEAM_OUTPUTS[:1], **_gen_attrs(10, 0)), with_dec_ids,
            UnsupportedOpError, "decoder_input_ids")
    no_logits = onnx.GraphProto()
    no_logits.CopyFrom(enc)
    del no_logits.output[:6]  # keep the cross presents only: the newer encoder format
    _raises(_model("BeamSearch", dict(decoder=dec, encoder=no_logits), b, BEAM_OUTPUTS[:1],
                   **_gen_attrs(10, 0, model_type=1, decoder_start_token_id=2)), b,
            UnsupportedOpError, "without a logits output")


def test_errors():
    def greedy(inputs, decoder=None):
        return _model("GreedySearch", dict(decoder=decoder or gpt_decoder()), inputs,
                      [("sequences", I32)], **_gen_attrs(10, 0))

    for inputs, error, match in (
            (_greedy_inputs(_PROMPT, 4), OpAttributeError, "greater than the input"),
            (_greedy_inputs(_PROMPT, 9, vocab_mask=np.ones(12, np.int32)), ShapeError,
             "vocab_mask must have shape"),
            (_greedy_inputs(_PROMPT, 9, attention_mask=np.ones((3, 2), np.int32)),
             ShapeError, "attention_mask"),
            (_greedy_inputs(_PROMPT, 9, 9), OpAttributeError, "min_length")):
        _raises(greedy(inputs), inputs, error, match)
    g = _greedy_inputs(_PROMPT, 9)
    renamed = gpt_decoder()
    renamed.input[1].name = "positions"
    _raises(greedy(g, renamed), g, OneGraphError, "position_ids")
    eos_out = _greedy_inputs(_PROMPT, 9, 6)
    _raises(_model("GreedySearch", dict(decoder=gpt_decoder()), eos_out, [("sequences", I32)],
                   **_gen_attrs(99, 0)), eos_out, OpAttributeError, "inside the vocabulary")
    b = _beam_inputs(_PROMPT, 9, 2, 3)
    _raises(_model("BeamSearch", dict(decoder=gpt_decoder()), b, BEAM_OUTPUTS[:1],
                   **_gen_attrs(10, 0)), b, OpAttributeError, "num_return_sequences")
    enc, dec = t5_pair(0)
    t5 = _beam_inputs(_T5_IDS, 9, 2)
    _raises(_model("BeamSearch", dict(decoder=dec, encoder=enc), t5, BEAM_OUTPUTS[:1],
                   **_gen_attrs(10, 0, model_type=1)), t5, OpAttributeError,
            "decoder_start_token_id")


def test_inference():
    i32, f32 = np.dtype(np.int32), np.dtype(np.float32)
    ids = TensorInfo(i32, (3, 4))
    max_len = TensorInfo(i32, (1,), np.array([9], np.int32))
    beams = TensorInfo(i32, (1,), np.array([4], np.int32))
    ret = TensorInfo(i32, (1,), np.array([2], np.int32))
    greedy = REGISTRY.get("GreedySearch", MS)
    assert greedy.infer(greedy.resolve_attrs(dict(decoder=None, eos_token_id=1,
                                                  pad_token_id=0)),
                        [ids, max_len]) == [TensorInfo(i32, (3, 9))]
    beam = REGISTRY.get("BeamSearch", MS)
    attrs = beam.resolve_attrs(dict(decoder=None, eos_token_id=1, pad_token_id=0,
                                    vocab_size=11))
    assert beam.infer(attrs, [ids, max_len, None, beams, ret]) == [
        TensorInfo(i32, (3, 2, 9)), TensorInfo(f32, (3, 2)), TensorInfo(f32, (5, 3, 4, 11))]
    attrs = beam.resolve_attrs(dict(decoder=None, eos_token_id=1, pad_token_id=0,
                                    model_type=1))
    assert beam.infer(attrs, [ids, max_len, None, beams, ret])[2] == \
        TensorInfo(f32, (8, 3, 4, None))


def test_hostile_inputs():
    """onegraph errors, never raw numpy ones: ids outside the vocabulary reaching the
    processors (a pad id past the vocabulary once a row ended: onnxruntime would write
    out of bounds, onegraph skips them), float scalars, an empty prompt, an init_decoder
    that does not fit the decoder, no executor for the subgraphs."""
    ids = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    inputs = _greedy_inputs(ids, 12, None, 1.3)
    for ngram in (1, 2):
        model = _model("GreedySearch", dict(decoder=gpt_decoder(1, wrap_ids=True)), inputs,
                       [("sequences", I32)], **_gen_attrs(4, 50, no_repeat_ngram_size=ngram))
        got = _og(model, inputs)[0]
        assert (got[0, 4:] == 50).all() and not (got[1] == 50).any()  # row 0 ended first
    model = _model("GreedySearch", dict(decoder=gpt_decoder()), inputs, [("sequences", I32)],
                   **_gen_attrs(99, 0))
    floats = [("input_ids", ids), ("max_length", np.array([9.0], np.float32))] + inputs[2:]
    _raises(_model("GreedySearch", dict(decoder=gpt_decoder()), floats, [("sequences", I32)],
                   **_gen_attrs(99, 0)), floats, ShapeError, "max_length must be int32")
    empty = _greedy_inputs(np.zeros((2, 0), np.int32), 5)
    _raises(_model("GreedySearch", dict(decoder=gpt_decoder()), empty, [("sequences", I32)],
                   **_gen_attrs(99, 0)), empty, ShapeError, "at least one token")
    b = _beam_inputs(ids, 8, 2)
    _raises(_model("BeamSearch", dict(decoder=gpt_decoder(), init_decoder=gpt_decoder(
        layers=2, name="init")), b, BEAM_OUTPUTS[:1], **_gen_attrs(99, 0)), b,
        OpAttributeError, "init_decoder")
    opdef = REGISTRY.get("GreedySearch", MS)
    graph = from_onnx(model).graph.nodes[0].attributes["decoder"]
    attrs = opdef.resolve_attrs(dict(decoder=graph, eos_token_id=99, pad_token_id=0))
    with pytest.raises(UnsupportedOpError, match="runs subgraphs"):
        opdef.kernel([ids, _i32(6)], attrs, None)


def test_sampling_filtered_logits_is_absent():
    """filtered_logits is written by onnxruntime's debug builds only: both give None."""
    inputs = _greedy_inputs(_PROMPT, 9) + [("presence_mask", None), ("seed", _i32(1))]
    model = _model("Sampling", dict(decoder=gpt_decoder(1)), inputs,
                   [("sequences", I32), ("filtered_logits", F)], **_gen_attrs(99, 0, top_p=1e-4))
    want, got = _ort(model, inputs), _og(model, inputs)
    np.testing.assert_array_equal(got[0], want[0])
    assert want[1] is None and got[1] is None


# --------------------------------------------------------------------------------------
# WhisperBeamSearch
# --------------------------------------------------------------------------------------
# Tolerances: TOL, as the module docstring says (measured errors there). Token ids of the
# timestamp cases, Whisper's order shrunk: eos 9, start of transcript 10, translate 11,
# transcribe 12, start of LM 13, no timestamps 16, first timestamp 17.

_FEATURES = np.random.default_rng(7).standard_normal((2, 3, 5)).astype(np.float32)
_TS_IDS = dict(translate_token_id=11, transcribe_token_id=12, start_of_lm_token_id=13,
               no_timestamps_token_id=16, beginning_timestamp_token_id=17)


def _whisper_inputs(max_length, beams, ret=1, min_length=0, length_penalty=1.0,
                    repetition_penalty=None, vocab_mask=None, prefix_vocab_mask=None,
                    decoder_input_ids=None, logits_processor=None, temperature=None,
                    features=_FEATURES, **more):
    """WhisperBeamSearch's 15 inputs in order; `more` sets attention_mask,
    cross_qk_layer_head or extra_decoding_ids."""
    return _beam_inputs(features, max_length, beams, ret, min_length, length_penalty,
                        repetition_penalty, vocab_mask, prefix_vocab_mask,
                        more.get("attention_mask")) + [
        ("decoder_input_ids", decoder_input_ids),
        ("logits_processor", None if logits_processor is None else _i32(logits_processor)),
        ("cross_qk_layer_head", more.get("cross_qk_layer_head")),
        ("extra_decoding_ids", more.get("extra_decoding_ids")),
        ("temperature", None if temperature is None else np.array([temperature], np.float32))]


def _whisper(pair, inputs, outputs=BEAM_OUTPUTS, eos=9, start=10, **attrs):
    attrs.setdefault("model_type", 2)
    return _model("WhisperBeamSearch", dict(zip(("encoder", "decoder"), pair)), inputs,
                  outputs, **_gen_attrs(eos, 0, decoder_start_token_id=start, **attrs))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("variant", [dict(), dict(hidden_input=False), dict(layers=2)])
@pytest.mark.parametrize("prompt", [None, _i32([10, 12, 6], [10, 11, 7])])
def test_whisper_beam_search(seed, variant, prompt):
    """Encoder over float features and the forced prompt (decoder_input_ids, or
    decoder_start_token_id alone), its logits choosing the first token, then the decoder."""
    inputs = _whisper_inputs(9, 3, 2, decoder_input_ids=prompt)
    got = _check_beam(_whisper(whisper_pair(seed, vocab=24, **variant), inputs), inputs)
    length = 1 if prompt is None else 3
    assert got[2].shape == (9 - length, 2, 3, 24)
    assert (got[0][:, :, :length] == (10 if prompt is None else prompt[:, None, :])).all()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("early_stopping", [0, 1])
def test_whisper_beam_search_eos_and_processors(seed, early_stopping):
    """eos reachable, repetition penalty, ngrams, min_length counting the prompt, the
    vocabulary masks (the prefix mask on the encoder's logits), the temperature input."""
    vm = np.ones(11, np.int32)
    vm[5] = 0
    pm = np.ones((2, 11), np.int32)
    pm[:, 4] = 0
    for eos, temperature in ((3, None), (4, 0.6), (8, 1.7)):
        inputs = _whisper_inputs(9, 4, 2, 3, 1.3, 1.4, vm if seed % 2 else None, pm,
                                 _i32([1, 2], [1, 6]) if seed > 1 else None,
                                 temperature=temperature)
        _check_beam(_whisper(whisper_pair(seed), inputs, eos=eos, start=1,
                             early_stopping=early_stopping, no_repeat_ngram_size=2), inputs)


@pytest.mark.parametrize("seed", range(4))
def test_whisper_timestamp_rules(seed):
    """logits_processor=1: onnxruntime's timestamp rules (no-timestamps and start-of-LM
    never, task tokens not after the first timestamp, timestamps in pairs and not
    decreasing, the first one at most 50 steps in, and timestamps only when their summed
    probability beats every text token), with Whisper's token ids and with others; a
    vocabulary of 80 so that the initial-timestamp bound bites."""
    vocab = 80 if seed % 2 else 24
    pair = whisper_pair(seed, vocab=vocab, layers=1 + seed % 2)
    other = dict(translate_token_id=1, transcribe_token_id=2, start_of_lm_token_id=4,
                 no_timestamps_token_id=5, beginning_timestamp_token_id=8)
    changed = 0
    for prompt, start, ids, eos, temperature in (
            (None, 10, _TS_IDS, 9, None),
            (_i32([10, 12, 5], [10, 11, 6]), 3, other, 7, 0.7),
            (_i32([10, 17], [10, 12]), 6, _TS_IDS, 2, 1.5)):
        got = []
        for processor in (1, 0):
            inputs = _whisper_inputs(12, 3, 2, decoder_input_ids=prompt,
                                     logits_processor=processor, temperature=temperature,
                                     repetition_penalty=1.2 if seed == 2 else None)
            got.append(_check_beam(_whisper(pair, inputs, eos=eos, start=start,
                                            early_stopping=seed % 2, **ids), inputs)[0])
        changed += not np.array_equal(*got)
    assert changed  # the rules did something


@pytest.mark.parametrize("beams,ret,rows,more", [
    (3, 1, 2, dict(temperature=0.0)), (3, 2, 2, dict(temperature=-1.0)), (1, 1, 2, {}),
    (1, 1, 1, {}), (5, 5, 1, dict(decoder_input_ids=_i32([10, 17, 3]), logits_processor=1))])
def test_whisper_beam_search_edges(beams, ret, rows, more):
    """One beam, one batch row, temperature <= 0 (onnxruntime then adds no temperature
    processor), a prompt ending in a timestamp with five beams returned."""
    inputs = _whisper_inputs(10, beams, ret, features=_FEATURES[:rows], **more)
    _check_beam(_whisper(whisper_pair(3, vocab=24), inputs, **_TS_IDS), inputs)


def test_whisper_cross_qk_absent_and_round_trip():
    """cross_qk declared without decoder_output_cross_qk: neither writes it (None); the
    model written back by to_onnx runs in onnxruntime with the same result."""
    inputs = _whisper_inputs(8, 2, 1, decoder_input_ids=_i32([10, 12], [10, 11]),
                             logits_processor=1)
    model = _whisper(whisper_pair(5, vocab=24), inputs, BEAM_OUTPUTS + [("cross_qk", F)],
                     **_TS_IDS)
    want, got = _ort(model, inputs), _og(model, inputs)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], **TOL)
    assert want[3] is None and got[3] is None
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "whisper.onnx")
        to_onnx(from_onnx(model), path)
        back = onnx.load(path)
    np.testing.assert_array_equal(_ort(back, inputs)[0], got[0])


def test_whisper_refusals():
    pair = whisper_pair(0, vocab=24)
    base = _whisper_inputs(8, 2, decoder_input_ids=_i32([10], [10]))
    for name, value in (("attention_mask", np.ones((2, 1), np.int32)),
                        ("cross_qk_layer_head", _i32([0, 0])),
                        ("extra_decoding_ids", _i32([3], [4]))):
        inputs = _whisper_inputs(8, 2, decoder_input_ids=_i32([10], [10]), **{name: value})
        _raises(_whisper(pair, inputs), inputs, UnsupportedOpError, f"input {name}")
    _raises(_whisper(pair, base, decoder_output_cross_qk=1), base, UnsupportedOpError,
            "decoder_output_cross_qk")
    _raises(_whisper(pair, base, BEAM_OUTPUTS + [("cross_qk", F), ("no_speech", F)],
                     no_speech_token_id=15), base, UnsupportedOpError, "non_speech_probs")
    two = _whisper_inputs(8, 2, decoder_input_ids=_i32([10], [10]), logits_processor=2)
    _raises(_whisper(pair, two), two, UnsupportedOpError, "logits_processor=2")
    half = _whisper_inputs(8, 2, features=_FEATURES.astype(np.float16))
    _raises(_whisper(pair, half), half, UnsupportedOpError, "float16")
    enc, dec = pair
    seq = onnx.GraphProto()
    seq.CopyFrom(dec)
    seq.input[0].type.tensor_type.shape.dim[1].dim_param = "t"
    _raises(_whisper((enc, seq), base), base, UnsupportedOpError, "whole sequence")
    shared = onnx.GraphProto()
    shared.CopyFrom(dec)
    shared.input.append(helper.make_tensor_value_info("past_sequence_length", I32, [1]))
    _raises(_whisper((enc, shared), base), base, UnsupportedOpError, "past_sequence_length")


def test_whisper_errors():
    pair = whisper_pair(0, vocab=24)
    prompt = _i32([10, 12], [10, 11])
    base = _whisper_inputs(8, 2, decoder_input_ids=prompt)
    _raises(_whisper(pair, base, model_type=1), base, OpAttributeError, "model_type must be 2")
    no_ids = _whisper_inputs(8, 2)
    _raises(_whisper(pair, no_ids, start=-1), no_ids, OpAttributeError,
            "decoder_start_token_id")
    short = _whisper_inputs(3, 2, decoder_input_ids=prompt)
    _raises(_whisper(pair, short), short, OpAttributeError, r"prompt length \+ 2")
    ts = _whisper_inputs(8, 2, decoder_input_ids=prompt, logits_processor=1)
    _raises(_whisper(pair, ts, **dict(_TS_IDS, beginning_timestamp_token_id=24)), ts,
            OpAttributeError, "beginning_timestamp_token_id")
    _raises(_whisper(pair, ts), ts, OpAttributeError, "beginning_timestamp_token_id")
    bad_batch = _whisper_inputs(8, 2, decoder_input_ids=_i32([10, 12]))
    _raises(_whisper(pair, bad_batch), bad_batch, ShapeError, "decoder_input_ids")
    flat = _whisper_inputs(8, 2, features=_FEATURES[:, 0])
    _raises(_whisper(pair, flat), flat, ShapeError, "audio features")
    empty = _whisper_inputs(8, 2, features=_FEATURES[:0])
    _raises(_whisper(pair, empty), empty, ShapeError, "no batch row")
    floats = _whisper_inputs(8, 2, decoder_input_ids=prompt.astype(np.float32))
    _raises(_whisper(pair, floats), floats, ShapeError, "decoder_input_ids must be int32")
    model = _whisper(pair, base)
    del model.graph.node[0].attribute[[a.name for a in model.graph.node[0].attribute]
                                      .index("encoder")]
    _raises(model, base, OpAttributeError, "encoder")
    enc, dec = pair
    wrong = onnx.GraphProto()
    wrong.CopyFrom(enc)
    wrong.input[1].name = "decoder_ids"
    _raises(_whisper((wrong, dec), base), base, OpAttributeError, "encoder subgraph must take")


def test_whisper_inference():
    i32, f32 = np.dtype(np.int32), np.dtype(np.float32)
    op = REGISTRY.get("WhisperBeamSearch", MS)
    attrs = op.resolve_attrs(dict(decoder=None, eos_token_id=1, pad_token_id=0,
                                  vocab_size=24))
    feats = TensorInfo(f32, (2, 3, 5))
    max_len = TensorInfo(i32, (1,), np.array([9], np.int32))
    beams = TensorInfo(i32, (1,), np.array([3], np.int32))
    ret = TensorInfo(i32, (1,), np.array([2], np.int32))
    prompt = TensorInfo(i32, (2, 3))
    got = op.infer(attrs, [feats, max_len, None, beams, ret] + [None] * 5 + [prompt])
    assert got[:3] == [TensorInfo(i32, (2, 2, 9)), TensorInfo(f32, (2, 2)),
                       TensorInfo(f32, (6, 2, 3, 24))]
    assert op.infer(attrs, [feats, max_len, None, beams, ret])[2].shape == (8, 2, 3, 24)
    inputs = _whisper_inputs(9, 3, 2, decoder_input_ids=_i32([10, 12, 6], [10, 11, 7]))
    real = _og(_whisper(whisper_pair(0, vocab=24), inputs), inputs)
    assert [r.shape for r in real] == [g.shape for g in got[:3]]

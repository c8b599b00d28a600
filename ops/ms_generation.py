"""Operators: onnxruntime's text-generation contrib ops (domain "com.microsoft").

`onnxruntime.transformers.convert_generation` wraps a decoder (GPT-2 style) or an
encoder-decoder (T5/BART style) into one node that runs the whole decoding loop:
GreedySearch, BeamSearch and Sampling; onnxruntime's Whisper export
(`onnxruntime.transformers.models.whisper.convert_to_onnx`, whisper_chain.py) writes
WhisperBeamSearch, a beam search over audio features. The models are graph-valued
attributes (`decoder`, optional `init_decoder`, `encoder`), run through `ctx.run_graph`
once per generated token; the loop over tokens is a Python loop, everything within a
step is vectorised over batch x beams. Inputs, outputs and attributes follow
onnxruntime's schemas; the semantics follow its CPU kernels
(contrib_ops/cpu/transformers: greedy_search_impl_gpt.h, beam_search_impl_gpt.h,
beam_search_impl_t5.h, beam_search_impl_whisper.h, subgraph_whisper_*.cc,
beam_search_scorer.cc, logits_processor.cc, generation_device_helper.cc,
sampling_cpu_helper.h), which the tests use as the oracle.

Subgraph conventions
--------------------
GPT-2 decoder (model_type 0; `init_decoder`, when given, runs the first step):
inputs ``input_ids, position_ids, attention_mask`` (int32) then ``past_0 .. past_{L-1}``
of shape (2, batch*beams, heads, past_length, head_size); outputs ``logits`` (B, S, V)
then ``present_0 ..``. The first call gets the prompt with empty pasts; position ids
count the non-pad tokens (a pad token, left padding, has position 0 and, without an
``attention_mask`` input, mask 0); later calls get the chosen tokens (B, 1), their
positions (the prompt's non-pad count, then +1 per step) and the mask with a 1
appended. Greedy search passes each present on as the next past; beam search gathers
the presents' batch rows by the beams it keeps.

Encoder-decoder (BeamSearch model_type 1): the encoder takes ``encoder_input_ids,
encoder_attention_mask, decoder_input_ids`` (batch rows, decoder_input_ids filled with
``decoder_start_token_id``) and returns ``logits, encoder_hidden_states`` then the
decoder's initial ``present_key_self_i, present_value_self_i`` (per layer) and
``present_key_cross_i, present_value_cross_i``. Its logits choose the first token; the
decoder takes ``input_ids`` (the chosen tokens, or the whole sequence when its declared
second dim is not 1), ``encoder_attention_mask``, optionally ``encoder_hidden_states``,
then the self and cross pasts, all repeated per beam, and returns ``logits`` and the
self presents. Without an attention_mask input the encoder mask is 0 only on left
padding (pad tokens before the first other token).

Whisper (WhisperBeamSearch, model_type 2): input 0 is the float32 audio features (batch,
feature_size, frames). The encoder takes ``encoder_input_ids`` (those features) and
``decoder_input_ids`` (the forced prompt: the decoder_input_ids input, or one
``decoder_start_token_id`` per row) and returns ``logits`` (batch, prompt_length, vocab),
``encoder_hidden_states``, then the self presents of the prompt and the cross presents
(self key/value per layer, then cross key/value per layer). The prompt starts every
sequence (its length counts for min_length, length_penalty and the steps of `scores`);
the encoder's last logits choose the first token; the decoder takes ``input_ids``
(batch*beams, 1), optionally ``encoder_hidden_states``, then the self and cross pasts
repeated per beam, and returns ``logits`` and the self presents, as model_type 1.
The temperature input divides the log-probabilities (after min_length, as onnxruntime's
processor list). logits_processor=1 adds onnxruntime's TimestampLogitsProcessor, last,
on the log-probabilities, with the token-id attributes (sot = decoder_start_token_id,
timestamps = every id from beginning_timestamp_token_id on; the first timestamp of the
sequence, prompt included, ends its "beginning"): no_timestamps and start_of_lm never;
sot, translate and transcribe not once a token follows the first timestamp; after a lone
timestamp nothing below eos, after a pair (or the first one) no timestamp; no timestamp
below the last one after a lone one, none below or equal to it after a pair; while no
token follows the first timestamp, none beyond beginning + 50; and every text token
(below the first timestamp id) cut when log(sum(exp(timestamp scores))) beats every
text token's score. Where the decoder takes encoder_hidden_states, onegraph feeds the
encoder's (repeated per beam); onnxruntime's CPU kernel feeds a buffer of that shape
it never writes (ExpandBuffer with only_copy_shape), so a decoder that reads it gives
allocator-dependent results there (the tests' Whisper decoders take it without reading
it; probed: a decoder that reads it disagrees with onnxruntime).

Scores: greedy search and sampling run the logits processors on the raw logits of the
last position; beam search on their log-softmax (float32), then adds each beam's
running score and keeps the top 2*beams of (beams x vocab) per batch entry. The
processors, in onnxruntime's order: repetition_penalty (score * p if negative, else
/ p, on every token in the sequence so far), no_repeat_ngram_size, vocab_mask,
prefix_vocab_mask (first step only), min_length (eos gets the lowest float while the
sequence, prompt included, is shorter), temperature (Sampling), presence_mask
(Sampling custom=1). Beam hypotheses that end in eos keep the sequence without the eos
and score sum_logprobs / length ** length_penalty (length: the whole sequence, prompt
included); a batch entry is done once it has num_beams hypotheses and, without
early_stopping, none of the running candidates can beat the worst.

onnxruntime's quirks kept (so results match its kernel): greedy search writes
pad_token_id, not eos, where a row ends; a finished batch entry of beam search is fed
pad tokens and the past of batch row 0; the "can a running beam still improve" check
of batch entry b looks at the top-2k scores from offset b*num_beams (its scorer's
indexing); presence_penalty subtracts everything from the first score of the batch
(its pointer never advances). Where onnxruntime leaves output memory unwritten (the
positions after an early stop of GreedySearch/Sampling, the steps of `scores` after
an early stop of BeamSearch) onegraph writes pad_token_id / zeros.

What is refused (UnsupportedOpError naming the op and the feature): subgraphs that
share past and present buffers (a ``past_sequence_length`` input, DecoderMasked*
attention), float16 logits, GreedySearch/Sampling with model_type != 0 (onnxruntime
1.32's GreedySearch kernel refuses it at load too), BeamSearch model_type 2 (Whisper: use
WhisperBeamSearch) and the inputs decoder_input_ids and logits_processor of BeamSearch,
encoder subgraphs in the format without logits, and Sampling's top_p <= 0 (onnxruntime
then filters every token and samples uniformly among them). WhisperBeamSearch refuses
decoder_output_cross_qk != 0 and the inputs cross_qk_layer_head and extra_decoding_ids
(onnxruntime collects cross QK only with DecoderMaskedMultiHeadAttention, a CUDA
kernel), the output non_speech_probs (onnxruntime's CPU kernel never writes it: probed,
it returns zeros or leftovers), the attention_mask input, logits_processor other than
0 and 1, float16 features, decoders taking the whole sequence as input_ids, and
max_length below the prompt length + 2 (onnxruntime's kernel then fails or runs no
step). A declared cross_qk output stays empty (None), as onnxruntime's CPU kernel
leaves it.
Sampling filters as onnxruntime does (top_p over the softmax of the processed scores,
custom=0 the HF rule, custom=1 onnxruntime's variant, filter_value on what is cut),
then draws one token per row from the softmax of what is left, with numpy's generator
seeded by the `seed` input (without it, the executor's `ctx.rng`). onnxruntime's
std::default_random_engine cannot be reproduced: only draws with one candidate left
(every other token filtered) equal onnxruntime's, the rest match it in distribution.
`filtered_logits` stays empty (None), as in onnxruntime's release builds, which write
it only when built with DEBUG_GENERATION.
Token-id attributes (eos, pad, decoder_start, the Whisper ids) outside int32 are refused
(OpAttributeError): the sequences are int32.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import OpAttributeError, ShapeError, UnsupportedOpError
from .registry import NUM_OUTPUTS, TensorInfo, define

_DOMAIN = "com.microsoft"
_LOWEST = np.float32(np.finfo(np.float32).min)  # std::numeric_limits<float>::lowest()
_MAX_LENGTH = {"GreedySearch": 16384, "Sampling": 16384, "BeamSearch": 4096,
               "WhisperBeamSearch": 4096}
_MAX_BEAMS = 128

# --------------------------------------------------------------------------------------
# Inputs and parameters
# --------------------------------------------------------------------------------------


def _scalar(op, value, name, default, kind):
    """A one-element input as a Python int/float, `default` when the input is omitted.

    Raises:
        ShapeError: the input holds more or fewer than one element.
    """
    if value is None:
        return default
    arr = np.asarray(value)
    if arr.size != 1:
        raise ShapeError(f"{op}: {name} must hold one element, got shape {list(arr.shape)}")
    if arr.dtype.kind not in ("iu" if kind is int else "f"):
        raise ShapeError(f"{op}: {name} must be {'int32' if kind is int else 'float'}, got "
                         f"{arr.dtype}")
    return kind(arr.reshape(-1)[0])


def _int32(op, value, name):
    arr = np.asarray(value)
    if arr.dtype != np.int32:
        raise ShapeError(f"{op}: {name} must be int32, got {arr.dtype}")
    return arr


@dataclasses.dataclass
class _Params:
    """One run's parameters (onnxruntime's *SearchParameters)."""

    op: str
    batch_size: int
    sequence_length: int
    max_length: int
    min_length: int
    num_beams: int
    num_return_sequences: int
    length_penalty: float
    repetition_penalty: float
    eos: int
    pad: int
    no_repeat_ngram_size: int
    early_stopping: bool
    vocab_size: int
    vocab_mask: np.ndarray | None
    prefix_vocab_mask: np.ndarray | None
    temperature: float = 1.0
    presence_mask: np.ndarray | None = None
    presence_penalty: float = 0.0
    timestamps: dict | None = None     # Whisper's timestamp rules: the token ids


def _check_token_ids(op, attrs):
    """Refuse a *_token_id attribute outside int32, the type of the sequences (and of
    onnxruntime's token ids), before any is written into an int32 array.

    Raises:
        OpAttributeError: names the attribute and its value.
    """
    for name in sorted(k for k in attrs if k.endswith("_token_id")):
        if attrs[name] is not None and not -2**31 <= attrs[name] < 2**31:
            raise OpAttributeError(f"{op}: {name} ({attrs[name]}) does not fit in int32")


def _common_params(op, attrs, input_ids, sequence_length, max_length, min_length,
                   num_beams, num_return, length_penalty, repetition_penalty, vocab_mask,
                   prefix_vocab_mask, attention_mask, vocab_size):
    """Check the inputs shared by the three ops and build `_Params`.

    Raises:
        ShapeError: an input has the wrong shape or element type.
        OpAttributeError: an attribute or scalar input is out of range.
    """
    ids = _int32(op, input_ids, "input_ids")
    if ids.ndim != 2:
        raise ShapeError(f"{op}: input_ids must be 2-D (batch_size, sequence_length), got "
                         f"shape {list(ids.shape)}")
    batch = ids.shape[0]
    if sequence_length < 1 or ids.shape[1] < 1:
        raise ShapeError(f"{op}: input_ids must hold at least one token per row, got shape "
                         f"{list(ids.shape)}")
    _check_token_ids(op, attrs)
    if attrs["eos_token_id"] < 0 or attrs["pad_token_id"] < 0:
        raise OpAttributeError(f"{op}: eos_token_id and pad_token_id must be >= 0, got "
                               f"{attrs['eos_token_id']} and {attrs['pad_token_id']}")
    if max_length <= sequence_length:
        raise OpAttributeError(f"{op}: max_length ({max_length}) must be greater than the "
                               f"input sequence length ({sequence_length})")
    if max_length > _MAX_LENGTH[op]:
        raise OpAttributeError(f"{op}: max_length ({max_length}) must be no more than "
                               f"{_MAX_LENGTH[op]}")
    if min_length >= max_length:
        raise OpAttributeError(f"{op}: min_length ({min_length}) must be smaller than "
                               f"max_length ({max_length})")
    if not 1 <= num_beams <= _MAX_BEAMS:
        raise OpAttributeError(f"{op}: num_beams must be in [1, {_MAX_BEAMS}], got {num_beams}")
    if not 1 <= num_return <= num_beams:
        raise OpAttributeError(f"{op}: num_return_sequences ({num_return}) must be in "
                               f"[1, num_beams ({num_beams})]")
    if not repetition_penalty > 0:
        raise OpAttributeError(f"{op}: repetition_penalty must be > 0, got "
                               f"{repetition_penalty}")
    if vocab_mask is not None:
        vocab_mask = _int32(op, vocab_mask, "vocab_mask")
        if vocab_mask.shape != (vocab_size,):
            raise ShapeError(f"{op}: vocab_mask must have shape [{vocab_size}] (vocab_size), "
                             f"got {list(vocab_mask.shape)}")
    if prefix_vocab_mask is not None:
        prefix_vocab_mask = _int32(op, prefix_vocab_mask, "prefix_vocab_mask")
        if prefix_vocab_mask.shape != (batch, vocab_size):
            raise ShapeError(f"{op}: prefix_vocab_mask must have shape [{batch}, "
                             f"{vocab_size}] (batch_size, vocab_size), got "
                             f"{list(prefix_vocab_mask.shape)}")
    if attention_mask is not None:
        attention_mask = _int32(op, attention_mask, "attention_mask")
        if attention_mask.shape != ids.shape:
            raise ShapeError(f"{op}: attention_mask must have the shape of input_ids "
                             f"{list(ids.shape)}, got {list(attention_mask.shape)}")
    eos = attrs["eos_token_id"]
    if min_length > 0 and eos >= vocab_size:
        raise OpAttributeError(f"{op}: min_length needs eos_token_id ({eos}) inside the "
                               f"vocabulary ({vocab_size} tokens)")
    return _Params(op=op, batch_size=batch, sequence_length=sequence_length,
                   max_length=max_length, min_length=min_length, num_beams=num_beams,
                   num_return_sequences=num_return, length_penalty=length_penalty,
                   repetition_penalty=repetition_penalty, eos=attrs["eos_token_id"],
                   pad=attrs["pad_token_id"],
                   no_repeat_ngram_size=attrs["no_repeat_ngram_size"],
                   early_stopping=bool(attrs.get("early_stopping", 0) == 1),
                   vocab_size=vocab_size, vocab_mask=vocab_mask,
                   prefix_vocab_mask=prefix_vocab_mask)


# --------------------------------------------------------------------------------------
# Subgraphs
# --------------------------------------------------------------------------------------


def _names(graph, which):
    return [graph.tensors[i].name for i in getattr(graph, which)]


def _declared(graph, index):
    """(numpy dtype or None, shape tuple with None for unknown dims, or None)."""
    t = graph.tensors[index]
    try:
        dtype = None if t.dtype.name == "UNDEFINED" else np.dtype(t.dtype.numpy)
    except Exception:  # noqa: BLE001 - a dtype without numpy equivalent
        dtype = None
    shape = None if t.shape is None else tuple(None if d < 0 else d for d in t.shape)
    return dtype, shape


def _refuse_shared_buffers(op, attr, names):
    for special in ("past_sequence_length", "beam_width", "cache_indirection"):
        if special in names:
            raise UnsupportedOpError(f"{op}: {attr} subgraph input {special!r} (past and "
                                     "present sharing one buffer, DecoderMasked* attention) "
                                     "is not supported")


def _logits_dtype(op, attr, graph):
    dtype, shape = _declared(graph, graph.outputs[0])
    if dtype is not None and dtype == np.float16:
        raise UnsupportedOpError(f"{op}: {attr} subgraph with float16 logits is not "
                                 "supported")
    if dtype is not None and dtype != np.float32:
        raise OpAttributeError(f"{op}: {attr} subgraph output 0 (logits) must be float, "
                               f"got {dtype}")
    if shape is not None and len(shape) != 3:
        raise OpAttributeError(f"{op}: {attr} subgraph logits must be 3-D (batch, "
                               f"sequence, vocab), declared {len(shape)}-D")
    return None if shape is None else shape[2]


@dataclasses.dataclass
class _GptLayout:
    """A checked GPT-2 style subgraph: its layers, past shape and vocabulary."""

    graph: object
    layers: int
    heads: int
    head_size: int
    vocab: int | None


def _gpt_layout(op, attr, graph) -> _GptLayout:
    """Check a GPT-2 decoder subgraph against onnxruntime's GptSubgraph::Validate.

    Raises:
        OpAttributeError: names or counts of inputs/outputs, or the past's declared
            shape, do not fit the convention.
        UnsupportedOpError: the subgraph shares past and present buffers.
    """
    ins, outs = _names(graph, "inputs"), _names(graph, "outputs")
    _refuse_shared_buffers(op, attr, ins)
    want = ["input_ids", "position_ids", "attention_mask", "past_0"]
    if ins[:4] != want or outs[:2] != ["logits", "present_0"]:
        raise OpAttributeError(f"{op}: {attr} subgraph must take {want + ['past_1 ...']} "
                               f"and return ['logits', 'present_0', ...], got inputs {ins} "
                               f"and outputs {outs}")
    if len(ins) != len(outs) + 2:
        raise OpAttributeError(f"{op}: {attr} subgraph needs one past_i input per "
                               f"present_i output: {len(ins)} inputs, {len(outs)} outputs")
    for k, name in enumerate(ins[:3]):
        dtype, _ = _declared(graph, graph.inputs[k])
        if dtype is not None and dtype != np.int32:
            raise OpAttributeError(f"{op}: {attr} subgraph input {name} must be int32, "
                                   f"got {dtype}")
    _, past = _declared(graph, graph.inputs[3])
    if past is None or len(past) != 5 or past[0] != 2 or not past[2] or not past[4]:
        raise OpAttributeError(f"{op}: {attr} subgraph past_0 must be declared 5-D (2, "
                               "batch, num_heads, past_length, head_size) with num_heads "
                               f"and head_size known, got {past}")
    vocab = _logits_dtype(op, attr, graph)
    return _GptLayout(graph, len(outs) - 1, past[2], past[4], vocab)


@dataclasses.dataclass
class _T5Layout:
    """Checked encoder and decoder subgraphs of an encoder-decoder model."""

    encoder: object
    decoder: object
    layers: int
    hidden_input: bool         # the decoder takes encoder_hidden_states
    sequence_as_input: bool    # the decoder's input_ids is the whole sequence
    vocab: int | None


def _t5_layout(op, encoder, decoder) -> _T5Layout:
    """Check T5/BART encoder and decoder subgraphs (onnxruntime's T5EncoderSubgraph and
    T5DecoderSubgraph::Validate).

    Raises:
        OpAttributeError: names or counts of inputs/outputs do not fit the convention.
        UnsupportedOpError: an encoder without logits output (the newer format), or
            shared past/present buffers.
    """
    e_in, e_out = _names(encoder, "inputs"), _names(encoder, "outputs")
    want = ["encoder_input_ids", "encoder_attention_mask", "decoder_input_ids"]
    if e_in != want:
        raise OpAttributeError(f"{op}: encoder subgraph must take {want}, got {e_in}")
    if not e_out or e_out[0] != "logits":
        raise UnsupportedOpError(f"{op}: encoder subgraph without a logits output (outputs "
                                 f"{e_out[:3]}...) is not supported")
    if (e_out[1:2] != ["encoder_hidden_states"] or len(e_out) < 6
            or (len(e_out) - 2) % 4):
        raise OpAttributeError(f"{op}: encoder subgraph must return logits, "
                               "encoder_hidden_states and 4 presents per layer "
                               f"(self key/value, then cross key/value), got {e_out}")
    layers = (len(e_out) - 2) // 4
    d_in, d_out = _names(decoder, "inputs"), _names(decoder, "outputs")
    _refuse_shared_buffers(op, "decoder", d_in)
    hidden = len(d_in) > 2 and d_in[2] == "encoder_hidden_states"
    first_past = 3 if hidden else 2
    if d_in[:2] != ["input_ids", "encoder_attention_mask"] or not d_out \
            or d_out[0] != "logits":
        raise OpAttributeError(f"{op}: decoder subgraph must take input_ids, "
                               "encoder_attention_mask[, encoder_hidden_states], pasts and "
                               f"return logits, presents; got inputs {d_in}, outputs {d_out}")
    _check_cross_pasts(op, layers, d_in, d_out, first_past)
    for graph, names, what in ((encoder, want, "encoder"), (decoder, d_in[:2], "decoder")):
        for k, name in enumerate(names):
            dtype, _ = _declared(graph, graph.inputs[k])
            if dtype is not None and dtype != np.int32:
                raise OpAttributeError(f"{op}: {what} subgraph input {name} must be int32, "
                                       f"got {dtype}")
    _logits_dtype(op, "encoder", encoder)
    vocab = _logits_dtype(op, "decoder", decoder)
    _, ids_shape = _declared(decoder, decoder.inputs[0])
    sequence_as_input = not (ids_shape is not None and len(ids_shape) == 2
                             and ids_shape[1] == 1)
    return _T5Layout(encoder, decoder, layers, hidden, sequence_as_input, vocab)


def _check_init(op, init, decoder):
    """init_decoder hands its presents to decoder: same layers, heads and head size.

    Raises:
        OpAttributeError: they differ.
    """
    if init is None:
        return
    a = (init.layers, init.heads, init.head_size)
    b = (decoder.layers, decoder.heads, decoder.head_size)
    if a != b:
        raise OpAttributeError(f"{op}: init_decoder (layers, num_heads, head_size) = {a} "
                               f"differs from the decoder's {b}")


def _run(op, ctx, graph, feeds, what):
    """Run a subgraph; check its logits are (rows, sequence, vocab)."""
    if ctx is None:
        raise UnsupportedOpError(f"{op}: needs an executor that runs subgraphs")
    outs = list(ctx.run_graph(graph, feeds))
    logits = np.asarray(outs[0])
    if logits.ndim != 3:
        raise ShapeError(f"{op}: {what} subgraph returned logits of shape "
                         f"{list(logits.shape)}; it must be 3-D (batch, sequence, vocab)")
    if logits.dtype != np.float32:
        raise ShapeError(f"{op}: {what} subgraph returned {logits.dtype} logits; float32 "
                         "expected")
    outs[0] = logits
    return outs


def _vocab_size(op, attrs, *declared):
    v = attrs.get("vocab_size", -1)
    if v is not None and v > 0:
        return v
    for d in declared:
        if d:
            return d
    raise OpAttributeError(f"{op}: vocab_size is neither an attribute nor declared by the "
                           "decoder's logits (batch, sequence, vocab)")


def _last_logits(op, logits, rows, vocab, beams=1):
    """logits[:, -1, :] as (rows, vocab) float32; a (rows / beams)-row result is
    repeated per beam (an encoder that ran on the unexpanded batch)."""
    if logits.shape[2] != vocab:
        raise ShapeError(f"{op}: logits have {logits.shape[2]} entries per token, "
                         f"vocab_size is {vocab}")
    if logits.shape[1] < 1:
        raise ShapeError(f"{op}: logits of shape {list(logits.shape)} hold no position")
    last = logits[:, -1, :]
    if last.shape[0] == rows:
        return np.array(last, np.float32)
    if beams > 1 and last.shape[0] * beams == rows:
        return np.repeat(last, beams, axis=0).astype(np.float32)
    raise ShapeError(f"{op}: logits have {logits.shape[0]} rows, expected {rows}")


# --------------------------------------------------------------------------------------
# Logits processors (onnxruntime's LogitsProcessorList, vectorised over rows)
# --------------------------------------------------------------------------------------


def _process(p: _Params, scores, sequences, step):
    """Apply the logits processors in place to `scores` (rows, vocab) float32 given the
    sequences so far (rows, length) and the 1-based step."""
    rows, vocab = scores.shape
    length = sequences.shape[1]
    inside = (sequences >= 0) & (sequences < vocab)  # onnxruntime would write out of bounds
    if p.repetition_penalty != 1.0:
        seen = np.zeros((rows, vocab), bool)
        r, c = np.nonzero(inside)
        seen[r, sequences[r, c]] = True
        pen = np.float32(p.repetition_penalty)
        scores[:] = np.where(seen, np.where(scores < 0, scores * pen, scores / pen), scores)
    n = p.no_repeat_ngram_size
    if 0 < n <= length:
        if n == 1:
            blocked = sequences
            hits = inside.copy()
        else:
            windows = np.lib.stride_tricks.sliding_window_view(sequences, n, axis=1)
            prefix = sequences[:, length - n + 1:]
            hits = np.all(windows[:, :, :-1] == prefix[:, None, :], axis=2)
            blocked = windows[:, :, -1]
            hits &= (blocked >= 0) & (blocked < vocab)
        r, c = np.nonzero(hits)
        scores[r, blocked[r, c]] = _LOWEST
    if p.vocab_mask is not None:
        scores[:, p.vocab_mask == 0] = _LOWEST
    if p.prefix_vocab_mask is not None and step == 1:
        mask = np.repeat(p.prefix_vocab_mask, rows // p.batch_size, axis=0)
        scores[mask == 0] = _LOWEST
    if p.min_length > 0 and length < p.min_length:
        scores[:, p.eos] = _LOWEST
    if p.temperature > 0 and p.temperature != 1.0:
        scores /= np.float32(p.temperature)
    if p.presence_mask is not None and p.presence_penalty != 0.0:
        # onnxruntime's processor never advances its pointer: the first score takes it all
        first = scores.reshape(-1)[:1]
        pen = np.float32(p.presence_penalty)
        for m in p.presence_mask.reshape(-1)[:scores.size]:
            first -= np.float32(m) * pen
    if p.timestamps is not None:
        _timestamp_rules(p.timestamps, scores, sequences)
    return scores


_MAX_INITIAL_TIMESTAMP_INDEX = 50  # onnxruntime's constant


def _timestamp_rules(ids, scores, sequences):
    """onnxruntime's TimestampLogitsProcessor (WhisperBeamSearch, logits_processor=1) on
    log-probabilities (rows, vocab), in place. `ids` holds the token ids: eos, sot
    (decoder_start_token_id), translate, transcribe, start_of_lm, no_timestamps, begin
    (the first timestamp token; every token from it on is a timestamp)."""
    rows, vocab = scores.shape
    length = sequences.shape[1]
    begin = ids["begin"]
    r = np.arange(rows)
    is_ts = sequences >= begin
    any_ts = is_ts.any(axis=1)
    # onnxruntime counts tokens up to and including the first timestamp (all without one)
    sample_begin = np.where(any_ts, np.argmax(is_ts, axis=1) + 1, length)
    for t in (ids["no_timestamps"], ids["start_of_lm"]):
        if 0 <= t < vocab:
            scores[:, t] = _LOWEST
    after = length > sample_begin
    for t in (ids["sot"], ids["translate"], ids["transcribe"]):
        if 0 <= t < vocab:
            scores[after, t] = _LOWEST
    # timestamps come in pairs, except the first one
    last = is_ts[:, -1]
    penultimate = (length <= sample_begin) | (is_ts[:, -2] if length > 1 else True)
    cols = np.arange(vocab)
    scores[(last & penultimate)[:, None] & (cols >= begin)] = _LOWEST
    scores[(last & ~penultimate)[:, None] & (cols < ids["eos"])] = _LOWEST
    # timestamps do not decrease: below the last one (a single one) or up to it (a pair)
    last_value = np.where(any_ts, sequences[r, length - 1 - np.argmax(is_ts[:, ::-1], axis=1)],
                          0)
    bound = np.where(last & ~penultimate, last_value, last_value + 1)
    scores[any_ts[:, None] & (cols >= begin) & (cols < bound[:, None])] = _LOWEST
    first = (length == sample_begin)[:, None]
    scores[first & (cols > begin + _MAX_INITIAL_TIMESTAMP_INDEX)] = _LOWEST
    # a timestamp when their summed probability beats every text token
    ts = scores[:, begin:]
    top = ts.max(axis=1, keepdims=True)
    total = np.where(ts > _LOWEST, np.exp(ts - top), np.float32(0)).sum(
        axis=1, dtype=np.float32)
    with np.errstate(divide="ignore"):
        ts_logprob = np.where(total > 0, np.log(total) + top[:, 0], _LOWEST)
    text_max = scores[:, :begin].max(axis=1)
    scores[(ts_logprob > text_max)[:, None] & (cols < begin)] = _LOWEST


def _log_softmax(x):
    """SoftmaxCPU(logarithmic) in float32: x - max - log(sum(exp(x - max)))."""
    y = x - x.max(axis=1, keepdims=True)
    return (y - np.log(np.exp(y).sum(axis=1, keepdims=True))).astype(np.float32)


# --------------------------------------------------------------------------------------
# GPT-2 decoder feeds
# --------------------------------------------------------------------------------------


def _gpt_initial(ids, attention_mask, pad, beams, layout):
    """First feeds (expanded per beam) and each row's non-pad token count."""
    nonpad = ids != pad
    positions = np.where(nonpad, np.cumsum(nonpad, axis=1) - 1, 0).astype(np.int32)
    mask = nonpad.astype(np.int32) if attention_mask is None else attention_mask
    lengths = nonpad.sum(axis=1).astype(np.int32)
    rep = lambda a: np.repeat(a, beams, axis=0)  # noqa: E731
    rows = ids.shape[0] * beams
    past = np.zeros((2, rows, layout.heads, 0, layout.head_size), np.float32)
    feeds = [rep(ids), rep(positions), rep(mask)] + [past] * layout.layers
    return feeds, rep(lengths)


def _gpt_next(feeds, outs, tokens, positions, rows_kept):
    """Feeds of the next step: the chosen tokens, positions, the mask with a 1 appended,
    the presents as pasts (gathered by `rows_kept` unless None)."""
    mask = feeds[2]
    mask = np.concatenate([mask, np.ones((mask.shape[0], 1), mask.dtype)], axis=1)
    presents = outs[1:]
    if rows_kept is not None:
        presents = [np.asarray(pr)[:, rows_kept] for pr in presents]
    return [tokens.reshape(-1, 1).astype(np.int32), positions.reshape(-1, 1), mask] + presents


def _check_presents(op, outs, layers, rows):
    for k, pr in enumerate(outs[1:1 + layers]):
        pr = np.asarray(pr)
        if pr.ndim != 5 or pr.shape[0] != 2 or pr.shape[1] != rows:
            raise ShapeError(f"{op}: decoder output present_{k} has shape {list(pr.shape)}; "
                             f"expected (2, {rows}, num_heads, length, head_size)")


# --------------------------------------------------------------------------------------
# GreedySearch and Sampling
# --------------------------------------------------------------------------------------


def _gpt_decoders(op, inputs, attrs):
    """(decoder layout, init_decoder layout or None, input_ids, vocab size) of a GPT-2
    style generation node.

    Raises:
        OpAttributeError / ShapeError: the subgraphs do not follow the conventions, the
            init decoder does not fit the decoder, or input_ids is not int32.
    """
    decoder = _gpt_layout(op, "decoder", attrs["decoder"])
    init = None if attrs.get("init_decoder") is None else \
        _gpt_layout(op, "init_decoder", attrs["init_decoder"])
    _check_init(op, init, decoder)
    ids = _int32(op, inputs[0], "input_ids")
    vocab = _vocab_size(op, attrs, init.vocab if init else None, decoder.vocab)
    return decoder, init, ids, vocab


def _greedy_like(op, inputs, attrs, ctx, sampling):
    if attrs["model_type"] != 0:
        raise UnsupportedOpError(f"{op}: model_type={attrs['model_type']} is not supported "
                                 "(onnxruntime's CPU kernel runs GPT-2 style decoders only, "
                                 "model_type=0)")
    decoder, init, ids, vocab = _gpt_decoders(op, inputs, attrs)
    seq_len = ids.shape[1] if ids.ndim == 2 else 0
    max_length = _scalar(op, inputs[1], "max_length", _MAX_LENGTH[op], int)
    min_length = _scalar(op, inputs[2] if len(inputs) > 2 else None, "min_length", 0, int)
    rep = _scalar(op, inputs[3] if len(inputs) > 3 else None, "repetition_penalty", 1.0,
                  float)
    get = lambda k: inputs[k] if len(inputs) > k else None  # noqa: E731
    p = _common_params(op, attrs, ids, seq_len, max_length, min_length, 1, 1, 1.0, rep,
                       get(4), get(5), get(6), vocab)
    rng = None
    if sampling:
        p.temperature = attrs["temperature"]
        presence = get(7)
        if presence is not None:
            presence = _int32(op, presence, "presence_mask")
            if presence.shape != (p.batch_size, vocab):
                raise ShapeError(f"{op}: presence_mask must have shape [{p.batch_size}, "
                                 f"{vocab}], got {list(presence.shape)}")
            p.presence_mask = presence
            p.presence_penalty = attrs["presence_penalty"]
        seed = _scalar(op, get(8), "seed", 0, int)
        if seed < 0:
            raise OpAttributeError(f"{op}: seed must be >= 0, got {seed}")
        rng = np.random.default_rng(seed) if get(8) is not None else None
        if not attrs["top_p"] > 0:
            raise UnsupportedOpError(f"{op}: top_p={attrs['top_p']} (onnxruntime then filters "
                                     "every token and samples uniformly) is not supported")
    if sampling and rng is None and ctx is not None:
        rng = ctx.rng
    feeds, lengths = _gpt_initial(ids, get(6), p.pad, 1, init or decoder)
    sequences = ids.copy()
    eos_meet = np.zeros(p.batch_size, bool)
    positions = lengths.copy()
    current, step = p.sequence_length, 0
    while current < p.max_length:
        step += 1
        layout = init if step == 1 and init is not None else decoder
        outs = _run(op, ctx, layout.graph, feeds, "init_decoder" if layout is init else
                    "decoder")
        _check_presents(op, outs, layout.layers, p.batch_size)
        scores = _process(p, _last_logits(op, outs[0], p.batch_size, vocab), sequences, step)
        tokens = _sample(op, scores, attrs, rng) if sampling else \
            np.argmax(scores, axis=1).astype(np.int32)
        eos_meet |= tokens == p.eos
        tokens = np.where(eos_meet, np.int32(p.pad), tokens).astype(np.int32)
        sequences = np.concatenate([sequences, tokens[:, None]], axis=1)
        if eos_meet.all():
            break
        current += 1
        if current < p.max_length:
            if step > 1:
                positions = positions + 1
            feeds = _gpt_next(feeds, outs, tokens, positions, None)
    out = np.full((p.batch_size, p.max_length), p.pad, np.int32)
    out[:, :sequences.shape[1]] = sequences
    return (out,)


def _sample(op, scores, attrs, rng):
    """Top-p filtering as onnxruntime's SamplingCpuHelper, then one draw per row from
    softmax(filtered scores) with `ctx.rng`."""
    rows, vocab = scores.shape
    top_p = np.float32(attrs["top_p"])
    filt = np.float32(attrs["filter_value"])
    custom = attrs["custom"] == 1
    order = np.argsort(-scores if custom else scores, axis=1, kind="stable")
    sorted_scores = np.take_along_axis(scores, order, axis=1)
    probs = np.exp(sorted_scores - sorted_scores.max(axis=1, keepdims=True))
    probs = (probs / probs.sum(axis=1, keepdims=True)).astype(np.float32)
    cum = np.cumsum(probs, axis=1, dtype=np.float32)
    cut = np.zeros((rows, vocab), bool)
    if custom:  # filter sorted position j + 1 where the cumulative sum up to j > top_p
        cut[:, 1:vocab] = cum[:, :vocab - 1] > top_p
    else:       # filter sorted position j where the cumulative sum up to j <= 1 - top_p
        keep_last = max(int(attrs["min_tokens_to_keep"]), 0)
        upto = max(vocab - keep_last, 1)
        cut[:, :upto] = cum[:, :upto] <= np.float32(1) - top_p
    filtered = scores.copy()
    np.put_along_axis(filtered, order, np.where(cut, filt, sorted_scores), axis=1)
    finite = np.where(np.isfinite(filtered), filtered, -np.inf)
    weights = np.exp(finite - finite.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    single = (weights > 0).sum(axis=1) == 1
    tokens = np.argmax(weights, axis=1).astype(np.int32)
    if not single.all():
        if rng is None:
            raise UnsupportedOpError(f"{op}: sampling needs a seed input or an executor's "
                                     "random generator")
        u = rng.random(rows)
        draws = np.minimum((np.cumsum(weights, axis=1) <= u[:, None]).sum(axis=1), vocab - 1)
        tokens = np.where(single, tokens, draws).astype(np.int32)
    return tokens


def _greedy_kernel(inputs, attrs, ctx):
    return _greedy_like("GreedySearch", inputs, attrs, ctx, sampling=False)


def _sampling_kernel(inputs, attrs, ctx):
    return _greedy_like("Sampling", inputs, attrs, ctx, sampling=True)


# --------------------------------------------------------------------------------------
# BeamSearch
# --------------------------------------------------------------------------------------


class _Hypotheses:
    """onnxruntime's BeamHypotheses: the best `beams` finished sequences, best first."""

    def __init__(self, beams, length_penalty):
        self.beams, self.lp = beams, np.float32(length_penalty)
        self.items: list[tuple[np.float32, np.ndarray]] = []
        self.done = False

    def _score(self, sum_logprobs, length):
        return np.float32(np.float32(sum_logprobs)
                          / np.power(np.float32(length), self.lp, dtype=np.float32))

    def add(self, sequence, sum_logprobs):
        score = self._score(sum_logprobs, len(sequence))
        if len(self.items) == self.beams:
            if score <= self.items[-1][0]:
                return
            self.items.pop()
        k = len(self.items)
        while k > 0 and score > self.items[k - 1][0]:
            k -= 1
        self.items.insert(k, (score, np.array(sequence)))

    def can_improve(self, best_sum_logprobs, length):
        return self.items[-1][0] < self._score(best_sum_logprobs, length)


def _scorer_step(p: _Params, hyps, sequences, scores):
    """One BeamSearchScorer::Process over (batch*beams, vocab) scores (beam scores
    already added). Returns the next beam scores, tokens and (global) row indices."""
    B, M, V = p.batch_size, p.num_beams, scores.shape[1]
    flat = scores.reshape(B, M * V)
    top = np.argsort(-flat, axis=1, kind="stable")[:, :2 * M]
    top_scores = np.take_along_axis(flat, top, axis=1)
    top_tokens, top_beams = (top % V).astype(np.int32), (top // V).astype(np.int32)
    all_top = top_scores.reshape(-1)
    length = sequences.shape[1]
    next_scores = np.zeros(B * M, np.float32)
    next_tokens = np.full(B * M, p.pad, np.int32)
    next_rows = np.zeros(B * M, np.int64)
    for b in range(B):
        h = hyps[b]
        if h.done:  # onnxruntime pads the batch entry from row 0
            continue
        k = 0
        for j in range(2 * M):
            token, score, row = top_tokens[b, j], top_scores[b, j], b * M + top_beams[b, j]
            if token == p.eos:
                if j >= M:
                    continue
                h.add(sequences[row], score)
            else:
                next_scores[b * M + k], next_tokens[b * M + k] = score, token
                next_rows[b * M + k] = row
                k += 1
            if k == M:
                break
        if len(h.items) < M:
            continue
        if not p.early_stopping:
            window = all_top[b * M:b * M + 2 * M]  # onnxruntime's offset, sic
            if h.can_improve(window.max(), length):
                continue
        h.done = True
    return next_scores, next_tokens, next_rows


def _beam_outputs(p: _Params, hyps, sequences, beam_scores, step_scores, wanted):
    """BeamSearchScorer::Finalize plus the optional outputs."""
    B, M, R = p.batch_size, p.num_beams, p.num_return_sequences
    for b in range(B):
        if not hyps[b].done:
            for m in range(M):
                hyps[b].add(sequences[b * M + m], beam_scores[b * M + m])
    out = np.full((B, R, p.max_length), p.pad, np.int32)
    seq_scores = np.zeros((B, R), np.float32)
    for b in range(B):
        for r in range(R):
            score, seq = hyps[b].items[r]
            out[b, r, :len(seq)] = seq
            seq_scores[b, r] = score
    results = [out, seq_scores if wanted > 1 else None]
    if wanted > 2:
        steps = p.max_length - p.sequence_length
        scores = np.zeros((steps, B, M, p.vocab_size), np.float32)
        if step_scores:
            # the step count, not -1: with batch_size 0 every step is empty
            scores[:len(step_scores)] = np.stack(step_scores).reshape(
                len(step_scores), B, M, p.vocab_size)
        results.append(scores)
    return tuple(results[:max(wanted, 1)])


def _beam_step(p, hyps, sequences, beam_scores, logits, step, step_scores, beams=1):
    """Scores of one step -> (beam scores, tokens, kept rows, new sequences)."""
    rows = p.batch_size * p.num_beams
    scores = _log_softmax(_last_logits(p.op, logits, rows, p.vocab_size, beams))
    scores = _process(p, scores, sequences, step)
    scores += beam_scores[:, None]
    if step_scores is not None:
        step_scores.append(scores.copy())
    next_scores, tokens, kept = _scorer_step(p, hyps, sequences, scores)
    sequences = np.concatenate([sequences[kept], tokens[:, None]], axis=1)
    return next_scores, tokens, kept, sequences


def _beam_params(op, inputs, attrs, ids, seq_len, vocab):
    get = lambda k: inputs[k] if len(inputs) > k else None  # noqa: E731
    for k, name in ((10, "decoder_input_ids"), (11, "logits_processor")):
        if get(k) is not None:
            raise UnsupportedOpError(f"{op}: input {name} is not supported")
    max_length = _scalar(op, get(1), "max_length", _MAX_LENGTH[op], int)
    min_length = _scalar(op, get(2), "min_length", 0, int)
    beams = _scalar(op, get(3), "num_beams", 1, int)
    ret = _scalar(op, get(4), "num_return_sequences", 1, int)
    lp = _scalar(op, get(5), "length_penalty", 1.0, float)
    rep = _scalar(op, get(6), "repetition_penalty", 1.0, float)
    return _common_params(op, attrs, ids, seq_len, max_length, min_length, beams, ret, lp,
                          rep, get(7), get(8), get(9), vocab)


def _beam_kernel(inputs, attrs, ctx):
    op = "BeamSearch"
    model_type = attrs["model_type"]
    if model_type == 1:
        return _beam_t5(op, inputs, attrs, ctx)
    if model_type != 0:
        raise UnsupportedOpError(f"{op}: model_type={model_type} is not supported (0: GPT-2 "
                                 "style decoder, 1: encoder-decoder)")
    decoder, init, ids, vocab = _gpt_decoders(op, inputs, attrs)
    p = _beam_params(op, inputs, attrs, ids, ids.shape[1] if ids.ndim == 2 else 0, vocab)
    B, M = p.batch_size, p.num_beams
    rows = B * M
    feeds, lengths = _gpt_initial(ids, inputs[9] if len(inputs) > 9 else None, p.pad, M,
                                  init or decoder)
    wanted = attrs.get(NUM_OUTPUTS) or 3
    step_scores = [] if wanted > 2 else None
    hyps = [_Hypotheses(M, p.length_penalty) for _ in range(B)]
    beam_scores = np.zeros(rows, np.float32)
    beam_scores.reshape(B, M)[:, 1:] = np.float32(-1e9)
    sequences = np.repeat(ids, M, axis=0)
    positions = lengths.copy()
    current, step = p.sequence_length, 0
    while current < p.max_length:
        step += 1
        layout = init if step == 1 and init is not None else decoder
        outs = _run(op, ctx, layout.graph, feeds,
                    "init_decoder" if layout is init else "decoder")
        _check_presents(op, outs, layout.layers, rows)
        beam_scores, tokens, kept, sequences = _beam_step(
            p, hyps, sequences, beam_scores, outs[0], step, step_scores)
        if all(h.done for h in hyps):
            break
        current += 1
        if current < p.max_length:
            if step > 1:
                positions = positions + 1
            feeds = _gpt_next(feeds, outs, tokens, positions, kept if M > 1 else None)
    return _beam_outputs(p, hyps, sequences, beam_scores, step_scores, wanted)


def _t5_encoder_mask(ids, pad):
    """1 except on left padding (pad tokens before the row's first other token)."""
    return (np.cumsum(ids != pad, axis=1) > 0).astype(np.int32)


def _beam_t5(op, inputs, attrs, ctx):
    if attrs.get("encoder") is None:
        raise OpAttributeError(f"{op}: model_type=1 needs the encoder attribute")
    layout = _t5_layout(op, attrs["encoder"], attrs["decoder"])
    start = attrs["decoder_start_token_id"]
    if start < 0:
        raise OpAttributeError(f"{op}: model_type=1 needs decoder_start_token_id >= 0, got "
                               f"{start}")
    ids = _int32(op, inputs[0], "input_ids")
    vocab = _vocab_size(op, attrs, layout.vocab)
    p = _beam_params(op, inputs, attrs, ids, 1, vocab)
    if p.max_length < 3:
        raise OpAttributeError(f"{op}: max_length must be at least 3 for model_type=1 "
                               "(onnxruntime's kernel runs no step below it)")
    B, M = p.batch_size, p.num_beams
    mask = inputs[9] if len(inputs) > 9 and inputs[9] is not None else \
        _t5_encoder_mask(ids, p.pad)
    decoder_ids = np.full((B, 1), start, np.int32)
    enc = _run(op, ctx, layout.encoder, [ids, mask, decoder_ids], "encoder")
    wanted = attrs.get(NUM_OUTPUTS) or 3
    step_scores = [] if wanted > 2 else None
    rep = lambda a: np.repeat(np.asarray(a), M, axis=0)  # noqa: E731

    def step_ids(tokens, sequences):
        return (sequences if layout.sequence_as_input
                else tokens.reshape(-1, 1)).astype(np.int32)

    def first_feeds(tokens, sequences):
        return [step_ids(tokens, sequences), rep(mask)] \
            + ([rep(enc[1])] if layout.hidden_input else []) + [rep(x) for x in enc[2:]]

    hyps, sequences, beam_scores = _decode_beams(
        op, ctx, p, layout, enc[0], rep(decoder_ids), 2, first_feeds, step_ids,
        3 if layout.hidden_input else 2, step_scores)
    return _beam_outputs(p, hyps, sequences, beam_scores, step_scores, wanted)


def _check_cross_pasts(op, layers, d_in, d_out, first_past):
    """An encoder-decoder's decoder takes 4 past tensors per layer (self key/value,
    then cross key/value) from input `first_past` on and returns logits and 2 presents
    per layer.

    Raises:
        OpAttributeError: the counts do not fit the encoder's layers.
    """
    if len(d_in) - first_past != 4 * layers or len(d_out) != 1 + 2 * layers:
        raise OpAttributeError(f"{op}: the encoder has {layers} layer(s): the decoder "
                               f"needs {4 * layers} past inputs (self then cross) and "
                               f"{2 * layers} present outputs, got {len(d_in) - first_past} "
                               f"and {len(d_out) - 1}")


def _decode_beams(op, ctx, p: _Params, layout, first_logits, sequences, current,
                  first_feeds, next_ids, first_past, step_scores):
    """The beam search of an encoder-decoder after its encoder ran: the first tokens
    from the encoder's logits, then one decoder call per token with the decoder's
    presents reordered by beam, until max_length or every batch entry is done.
    `sequences` holds each row's tokens so far (batch*beams rows), `current` their
    length; `first_feeds(tokens, sequences)` gives the first decoder feeds and
    `next_ids(tokens, sequences)` the input ids of the later ones, whose past
    keys/values sit at feeds[first_past:first_past + 2 * layers]. Returns (hyps,
    sequences, beam_scores).

    Raises:
        ShapeError: the decoder's presents are not (batch*beams, heads, length, size).
    """
    B, M = p.batch_size, p.num_beams
    rows = B * M
    hyps = [_Hypotheses(M, p.length_penalty) for _ in range(B)]
    beam_scores = np.zeros(rows, np.float32)
    beam_scores.reshape(B, M)[:, 1:] = np.float32(-1e9)
    beam_scores, tokens, kept, sequences = _beam_step(
        p, hyps, sequences, beam_scores, first_logits, 1, step_scores, beams=M)
    step, n_self = 1, 2 * layout.layers
    feeds = first_feeds(tokens, sequences)
    while current < p.max_length:
        step += 1
        outs = _run(op, ctx, layout.decoder, feeds, "decoder")
        beam_scores, tokens, kept, sequences = _beam_step(
            p, hyps, sequences, beam_scores, outs[0], step, step_scores)
        if all(h.done for h in hyps):
            break
        current += 1
        if current < p.max_length:
            presents = [np.asarray(x) for x in outs[1:1 + n_self]]
            if any(x.ndim != 4 or x.shape[0] != rows for x in presents):
                raise ShapeError(f"{op}: decoder presents must be (batch*beams={rows}, "
                                 "num_heads, length, head_size), got "
                                 f"{[list(x.shape) for x in presents]}")
            if M > 1:
                presents = [x[kept] for x in presents]
            feeds = [next_ids(tokens, sequences)] + feeds[1:first_past] + presents \
                + feeds[first_past + n_self:]
    return hyps, sequences, beam_scores


# --------------------------------------------------------------------------------------
# WhisperBeamSearch
# --------------------------------------------------------------------------------------


@dataclasses.dataclass
class _WhisperLayout:
    """Checked encoder and decoder subgraphs of a Whisper model."""

    encoder: object
    decoder: object
    layers: int
    hidden_input: bool         # the decoder takes encoder_hidden_states
    vocab: int | None


def _whisper_layout(op, encoder, decoder) -> _WhisperLayout:
    """Check Whisper encoder and decoder subgraphs (onnxruntime's WhisperEncoderSubgraph
    and WhisperDecoderSubgraph::Validate).

    Raises:
        OpAttributeError: names or counts of inputs/outputs do not fit the convention.
        UnsupportedOpError: shared past/present buffers, a decoder that takes the whole
            sequence, float16 features or logits.
    """
    e_in, e_out = _names(encoder, "inputs"), _names(encoder, "outputs")
    want = ["encoder_input_ids", "decoder_input_ids"]
    if e_in != want:
        raise OpAttributeError(f"{op}: encoder subgraph must take {want}, got {e_in}")
    if (e_out[:4] != ["logits", "encoder_hidden_states", "present_key_self_0",
                      "present_value_self_0"] or (len(e_out) - 2) % 4):
        raise OpAttributeError(f"{op}: encoder subgraph must return logits, "
                               "encoder_hidden_states and 4 presents per layer "
                               f"(self key/value, then cross key/value), got {e_out}")
    layers = (len(e_out) - 2) // 4
    features, _ = _declared(encoder, encoder.inputs[0])
    if features is not None and features != np.float32:
        raise UnsupportedOpError(f"{op}: encoder subgraph features of type {features} are "
                                 "not supported (float32 only)")
    ids_dtype, _ = _declared(encoder, encoder.inputs[1])
    if ids_dtype is not None and ids_dtype != np.int32:
        raise OpAttributeError(f"{op}: encoder subgraph input decoder_input_ids must be "
                               f"int32, got {ids_dtype}")
    d_in, d_out = _names(decoder, "inputs"), _names(decoder, "outputs")
    _refuse_shared_buffers(op, "decoder", d_in)
    hidden = len(d_in) > 1 and d_in[1] == "encoder_hidden_states"
    first_past = 2 if hidden else 1
    if not d_in or d_in[0] != "input_ids" or not d_out or d_out[0] != "logits":
        raise OpAttributeError(f"{op}: decoder subgraph must take input_ids"
                               "[, encoder_hidden_states], pasts and return logits, "
                               f"presents; got inputs {d_in}, outputs {d_out}")
    _check_cross_pasts(op, layers, d_in, d_out, first_past)
    ids_dtype, ids_shape = _declared(decoder, decoder.inputs[0])
    if ids_dtype is not None and ids_dtype != np.int32:
        raise OpAttributeError(f"{op}: decoder subgraph input input_ids must be int32, got "
                               f"{ids_dtype}")
    if not (ids_shape is not None and len(ids_shape) == 2 and ids_shape[1] == 1):
        # onnxruntime then feeds the whole sequence, copying past the end of its buffer
        raise UnsupportedOpError(f"{op}: a decoder whose input_ids is not declared (batch, "
                                 f"1) (the whole sequence as input) is not supported, got "
                                 f"{ids_shape}")
    _logits_dtype(op, "encoder", encoder)
    vocab = _logits_dtype(op, "decoder", decoder)
    return _WhisperLayout(encoder, decoder, layers, hidden, vocab)


def _timestamp_ids(op, attrs, vocab):
    """The token ids the timestamp rules need (logits_processor=1).

    Raises:
        OpAttributeError: beginning_timestamp_token_id is not inside (0, vocab_size).
    """
    begin = attrs["beginning_timestamp_token_id"]
    if not 0 < begin < vocab:
        raise OpAttributeError(f"{op}: logits_processor=1 needs beginning_timestamp_token_id "
                               f"in (0, vocab_size={vocab}), got {begin}")
    return dict(eos=attrs["eos_token_id"], sot=attrs["decoder_start_token_id"],
                translate=attrs["translate_token_id"],
                transcribe=attrs["transcribe_token_id"],
                start_of_lm=attrs["start_of_lm_token_id"],
                no_timestamps=attrs["no_timestamps_token_id"], begin=begin)


def _whisper_kernel(inputs, attrs, ctx):
    """WhisperBeamSearch: encoder over the audio features and the forced prompt, whose
    logits choose the first token; then the decoder, one token per step, as BeamSearch."""
    op = "WhisperBeamSearch"
    get = lambda k: inputs[k] if len(inputs) > k else None  # noqa: E731
    if attrs["model_type"] != 2:
        raise OpAttributeError(f"{op}: model_type must be 2, got {attrs['model_type']}")
    if attrs.get("decoder_output_cross_qk", 0):
        raise UnsupportedOpError(f"{op}: decoder_output_cross_qk (onnxruntime collects cross "
                                 "QK only with DecoderMaskedMultiHeadAttention on CUDA) is "
                                 "not supported")
    for k, name in ((9, "attention_mask"), (12, "cross_qk_layer_head"),
                    (13, "extra_decoding_ids")):
        if get(k) is not None:
            raise UnsupportedOpError(f"{op}: input {name} is not supported")
    if (attrs.get(NUM_OUTPUTS) or 1) > 4:
        raise UnsupportedOpError(f"{op}: output non_speech_probs is not supported "
                                 "(onnxruntime's CPU kernel leaves it unwritten)")
    if attrs.get("encoder") is None:
        raise OpAttributeError(f"{op}: needs the encoder attribute")
    layout = _whisper_layout(op, attrs["encoder"], attrs["decoder"])
    features = np.asarray(inputs[0])
    if features.dtype == np.float16:
        raise UnsupportedOpError(f"{op}: float16 input features are not supported")
    if features.dtype != np.float32 or features.ndim != 3:
        raise ShapeError(f"{op}: input_ids (the audio features) must be float32 (batch, "
                         f"feature_size, frames), got {features.dtype} of shape "
                         f"{list(features.shape)}")
    batch = features.shape[0]
    if batch < 1:
        raise ShapeError(f"{op}: the audio features hold no batch row (shape "
                         f"{list(features.shape)})")
    _check_token_ids(op, attrs)
    start = attrs["decoder_start_token_id"]
    if get(10) is None:
        if start < 0:
            raise OpAttributeError(f"{op}: without decoder_input_ids, decoder_start_token_id "
                                   f"must be >= 0, got {start}")
        prompt = np.full((batch, 1), start, np.int32)
    else:
        prompt = _int32(op, get(10), "decoder_input_ids")
        if prompt.ndim != 2 or prompt.shape[0] != batch or prompt.shape[1] < 1:
            raise ShapeError(f"{op}: decoder_input_ids must be (batch={batch}, length >= 1), "
                             f"got shape {list(prompt.shape)}")
    vocab = _vocab_size(op, attrs, layout.vocab)
    max_length = _scalar(op, get(1), "max_length", _MAX_LENGTH[op], int)
    p = _common_params(op, attrs, prompt, prompt.shape[1], max_length,
                       _scalar(op, get(2), "min_length", 0, int),
                       _scalar(op, get(3), "num_beams", 1, int),
                       _scalar(op, get(4), "num_return_sequences", 1, int),
                       _scalar(op, get(5), "length_penalty", 1.0, float),
                       _scalar(op, get(6), "repetition_penalty", 1.0, float),
                       get(7), get(8), None, vocab)
    if p.max_length < p.sequence_length + 2:
        raise OpAttributeError(f"{op}: max_length ({p.max_length}) must be at least the "
                               f"prompt length + 2 ({p.sequence_length + 2}); onnxruntime's "
                               "kernel runs no step below it")
    processor = _scalar(op, get(11), "logits_processor", 0, int)
    if processor not in (0, 1):
        raise UnsupportedOpError(f"{op}: logits_processor={processor} is not supported (0: "
                                 "none, 1: Whisper's timestamp rules)")
    if processor == 1:
        p.timestamps = _timestamp_ids(op, attrs, vocab)
    p.temperature = _scalar(op, get(14), "temperature", 1.0, float)
    M = p.num_beams
    enc = _run(op, ctx, layout.encoder, [features, prompt], "encoder")
    wanted = attrs.get(NUM_OUTPUTS) or 1
    step_scores = [] if wanted > 2 else None
    rep = lambda a: np.repeat(np.asarray(a), M, axis=0)  # noqa: E731

    def step_ids(tokens, sequences):
        return tokens.reshape(-1, 1).astype(np.int32)

    def first_feeds(tokens, sequences):
        return [step_ids(tokens, sequences)] + ([rep(enc[1])] if layout.hidden_input else []) \
            + [rep(x) for x in enc[2:]]

    hyps, sequences, beam_scores = _decode_beams(
        op, ctx, p, layout, enc[0], rep(prompt), p.sequence_length + 1, first_feeds,
        step_ids,
        2 if layout.hidden_input else 1, step_scores)
    results = list(_beam_outputs(p, hyps, sequences, beam_scores, step_scores,
                                 min(wanted, 3)))
    if wanted > 3:
        results.append(None)  # cross_qk: onnxruntime's CPU kernel never writes it
    return tuple(results)


# --------------------------------------------------------------------------------------
# Inference
# --------------------------------------------------------------------------------------


def _known_int(info):
    if info is None or info.value is None or np.asarray(info.value).size != 1:
        return None
    return int(np.asarray(info.value).reshape(-1)[0])


def _batch(info):
    return None if info is None or info.shape is None or not info.shape else info.shape[0]


def _greedy_infer(attrs, inputs):
    """sequences int32 (batch, max_length)."""
    return [TensorInfo(np.dtype(np.int32), (_batch(inputs[0]), _known_int(inputs[1])))]


def _sampling_infer(attrs, inputs):
    """sequences int32 (batch, max_length), filtered_logits float32 (batch, vocab)."""
    vocab = attrs.get("vocab_size")
    return _greedy_infer(attrs, inputs) + [
        TensorInfo(np.dtype(np.float32), (_batch(inputs[0]), vocab if vocab and vocab > 0
                                          else None))]


def _beam_infer(attrs, inputs):
    """sequences int32 (batch, num_return_sequences, max_length), sequences_scores
    float32 (batch, num_return_sequences), scores float32 (steps, batch, beams, vocab)."""
    get = lambda k: inputs[k] if len(inputs) > k else None  # noqa: E731
    b, max_len = _batch(get(0)), _known_int(get(1))
    beams, ret = _known_int(get(3)), _known_int(get(4))
    seq = None
    if attrs["model_type"] == 1:
        seq = 1
    elif get(0) is not None and get(0).shape is not None and len(get(0).shape) == 2:
        seq = get(0).shape[1]
    steps = None if max_len is None or seq is None else max_len - seq
    vocab = attrs.get("vocab_size")
    f32 = np.dtype(np.float32)
    return [TensorInfo(np.dtype(np.int32), (b, ret, max_len)), TensorInfo(f32, (b, ret)),
            TensorInfo(f32, (steps, b, beams, vocab if vocab and vocab > 0 else None))]


def _whisper_infer(attrs, inputs):
    """As BeamSearch with the prompt length from decoder_input_ids (1 without it), plus
    cross_qk float32 (batch, num_return_sequences, layer_heads, steps, frames; never
    written on CPU) and non_speech_probs float32 (batch,)."""
    get = lambda k: inputs[k] if len(inputs) > k else None  # noqa: E731
    b, max_len = _batch(get(0)), _known_int(get(1))
    beams, ret = _known_int(get(3)), _known_int(get(4))
    seq = 1
    if get(10) is not None:
        shape = get(10).shape
        seq = shape[1] if shape is not None and len(shape) == 2 else None
    steps = None if max_len is None or seq is None else max_len - seq
    vocab = attrs.get("vocab_size")
    f32 = np.dtype(np.float32)
    return [TensorInfo(np.dtype(np.int32), (b, ret, max_len)), TensorInfo(f32, (b, ret)),
            TensorInfo(f32, (steps, b, beams, vocab if vocab and vocab > 0 else None)),
            TensorInfo(f32, (b, ret, None, None, None)), TensorInfo(f32, (b,))]


# --------------------------------------------------------------------------------------
# Definitions
# --------------------------------------------------------------------------------------

_COMMON_ATTRS = (("decoder", "graph"), ("encoder", "graph", None),
                 ("init_decoder", "graph", None), ("model_type", "int", 0),
                 ("eos_token_id", "int"), ("pad_token_id", "int"),
                 ("decoder_start_token_id", "int", -1), ("no_repeat_ngram_size", "int", 0),
                 ("vocab_size", "int", -1))

OPS = (
    define("GreedySearch",
           ("input_ids", "max_length", "min_length?", "repetition_penalty?", "vocab_mask?",
            "prefix_vocab_mask?", "attention_mask?"),
           ("sequences",), _greedy_kernel, _COMMON_ATTRS, infer=_greedy_infer,
           domain=_DOMAIN,
           doc="Greedy decoding loop over a GPT-2 style decoder subgraph."),
    define("BeamSearch",
           ("input_ids", "max_length", "min_length?", "num_beams", "num_return_sequences",
            "length_penalty?", "repetition_penalty?", "vocab_mask?", "prefix_vocab_mask?",
            "attention_mask?", "decoder_input_ids?", "logits_processor?"),
           ("sequences", "sequences_scores?", "scores?"), _beam_kernel,
           _COMMON_ATTRS + (("early_stopping", "int", 0),), infer=_beam_infer,
           domain=_DOMAIN,
           doc="Beam search over a GPT-2 decoder or an encoder-decoder pair of subgraphs."),
    define("Sampling",
           ("input_ids", "max_length", "min_length?", "repetition_penalty?", "vocab_mask?",
            "prefix_vocab_mask?", "attention_mask?", "presence_mask?", "seed?"),
           ("sequences", "filtered_logits?"), _sampling_kernel,
           _COMMON_ATTRS + (("temperature", "float", 1.0), ("top_p", "float", 0.0),
                            ("filter_value", "float", -1e20),
                            ("min_tokens_to_keep", "int", 0), ("custom", "int", 0),
                            ("presence_penalty", "float", 0.0)),
           infer=_sampling_infer, domain=_DOMAIN, stateful=True,
           doc="Top-p sampling loop over a GPT-2 style decoder subgraph."),
    define("WhisperBeamSearch",
           ("input_ids", "max_length", "min_length?", "num_beams", "num_return_sequences",
            "length_penalty?", "repetition_penalty?", "vocab_mask?", "prefix_vocab_mask?",
            "attention_mask?", "decoder_input_ids?", "logits_processor?",
            "cross_qk_layer_head?", "extra_decoding_ids?", "temperature?"),
           ("sequences", "sequences_scores?", "scores?", "cross_qk?", "non_speech_probs?"),
           _whisper_kernel,
           _COMMON_ATTRS[:3] + (("model_type", "int", 2),) + _COMMON_ATTRS[4:]
           + (("early_stopping", "int", 0), ("decoder_output_cross_qk", "int", 0),
              ("translate_token_id", "int", -1), ("transcribe_token_id", "int", -1),
              ("start_of_lm_token_id", "int", -1), ("no_speech_token_id", "int", -1),
              ("no_timestamps_token_id", "int", -1),
              ("beginning_timestamp_token_id", "int", -1)),
           infer=_whisper_infer, domain=_DOMAIN,
           doc="Beam search over a Whisper encoder (audio features) and decoder."),
)

KNOWN_FAILURES: dict[str, str] = {}

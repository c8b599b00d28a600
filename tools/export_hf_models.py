"""Export tiny HuggingFace `transformers` models to ONNX, as PyTorch's exporters write them.

A test-corpus generator for onegraph's ONNX importer: it builds real `transformers`
architectures (BERT, DistilBERT, RoBERTa, ALBERT, DeBERTa-v2, ELECTRA, GPT-2 with and
without a key/value cache, GPT-NeoX, GPT-J, OPT, Llama, Mistral, Qwen2, Phi, Gemma, T5,
BART, Whisper, ViT, DeiT, Swin, ConvNeXt, ResNet, SegFormer, MobileViT, wav2vec2,
CLIP, Bloom, Gemma 2, Mixtral, WavLM; and float16, bfloat16, eager-attention and
exporter-flag variants) from their config classes with tiny sizes and seeded random weights
(no download: nothing is read from the HuggingFace hub), wraps each so that its ONNX
outputs are plain tensors, exports it with `torch.onnx.export` through the TorchScript
exporter (`dynamo=False`) and the dynamo exporter at the opsets each catalogue entry
lists, some with dynamic batch / sequence axes, and saves seeded inputs next to it:

    OUT/<model>__<exporter>_op<opset>[_dyn].onnx
    OUT/<model>__<exporter>_op<opset>[_dyn].in<k>.npy       inputs (np.save, no pickle)
    OUT/<model>__<exporter>_op<opset>[_dyn].in<k>.alt.npy   a second batch/sequence size
                                                              (dynamic models only)
    OUT/<model>__<exporter>_op<opset>.out<k>.npy            eager torch's outputs, for
                                                              bfloat16 models only
    OUT/index.json      the exports that worked, by file: exporter, opset, dynamic,
                        input and output names, input files (and output files and
                        "reference": "torch" for models onnxruntime cannot run)
    OUT/manifest.json   every export tried, with the error when it failed

Dynamo exports whose file would exceed SIZE_LIMIT lose their per-node metadata_props
(the exporter's FX provenance strings, most of such a file), noted in the record.

It needs torch (CPU), transformers, onnx, onnxscript (for the dynamo exporter) and numpy;
onegraph's tests do not run it. Run it with a Python that has them, e.g.:

    HF_HUB_OFFLINE=1 /tmp/torchvenv/bin/python tools/export_hf_models.py \\
        tests/convert/data/hf_exported [--only NAME ...] [--no-dynamo]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # random init only: never reach the hub

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import transformers as T  # noqa: E402

SIZE_LIMIT = 50_000  # bytes; larger dynamo files lose node metadata_props
INIT = 0.1  # initializer_range: HF's 0.02 leaves activations too small to test much


# ----------------------------------------------------------------------------------
# Wrappers: plain tensors in, plain tensors out
# ----------------------------------------------------------------------------------

class Wrap(nn.Module):
    """Calls `model` with the positional inputs as keyword arguments `ins` (plus fixed
    keyword arguments `kw`) and returns the output fields `outs` as a tuple."""

    def __init__(self, model, ins, outs, **kw):
        """Wrap `model`; `outs` are attribute names of its ModelOutput."""
        super().__init__()
        self.model, self.ins, self.outs, self.kw = model, list(ins), list(outs), kw

    def forward(self, *args):
        """The selected outputs of the wrapped model."""
        res = self.model(**dict(zip(self.ins, args)), **self.kw)
        return tuple(getattr(res, name) for name in self.outs)


class CachedLM(nn.Module):
    """A causal LM step with a key/value cache: inputs are input_ids, attention_mask
    (past + new length) and past keys/values per layer as plain tensors (N, heads, P,
    head_dim); outputs are logits and the updated keys/values per layer."""

    def __init__(self, model, layers):
        """Wrap causal LM `model` with `layers` decoder layers."""
        super().__init__()
        self.model, self.layers = model, layers

    def forward(self, *args):
        """Logits then present key_0, value_0, key_1, ... of one decoding step; `args`
        are input_ids, attention_mask, past key_0, value_0, key_1, ... (one flat
        tuple, as Wrap takes them, so one dynamic_shapes layout serves both)."""
        input_ids, attention_mask, past = args[0], args[1], args[2:]
        cache = T.DynamicCache()
        for i in range(self.layers):
            cache.update(past[2 * i], past[2 * i + 1], i)
        res = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         past_key_values=cache, use_cache=True)
        presents = []
        for layer in res.past_key_values.layers:
            presents += [layer.keys, layer.values]
        return (res.logits, *presents)


# ----------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------

def _rand(rng, *shape, scale=1.0):
    """A float32 tensor of seeded normal values."""
    return torch.from_numpy((rng.standard_normal(shape) * scale).astype(np.float32))


def _ints(rng, high, *shape, low=0):
    """An int64 tensor of seeded integers in [low, high)."""
    return torch.from_numpy(rng.integers(low, high, shape).astype(np.int64))


def _pad_mask(n, length):
    """An int64 attention mask with trailing padding: row i has i % 3 zeros, so the
    first row is unpadded and never a whole row."""
    mask = torch.ones(n, length, dtype=torch.int64)
    for i in range(n):
        pad = i % 3
        if pad:
            mask[i, length - pad:] = 0
    return mask


def text_inputs(vocab, default_len, low=0):
    """input_ids in [low, vocab) and a padding mask, (N, L)."""
    def make(rng, n, length):
        length = length or default_len
        return _ints(rng, vocab, n, length, low=low), _pad_mask(n, length)
    return make


def ids_only(vocab, default_len, low=0):
    """input_ids in [low, vocab), (N, L)."""
    def make(rng, n, length):
        return (_ints(rng, vocab, n, length or default_len, low=low),)
    return make


def image_inputs(size, channels=3):
    """pixel_values (N, C, size, size), or (N, C, H, W) when the second argument (the
    sequence length of text models) is an (H, W) pair."""
    def make(rng, n, length):
        h, w = length if isinstance(length, tuple) else (size, size)
        return (_rand(rng, n, channels, h, w),)
    return make


def seq2seq_inputs(vocab, src_len, tgt_len, low=0):
    """input_ids and padding mask (N, S), decoder_input_ids (N, T)."""
    def make(rng, n, length):
        s = length or src_len
        t = max(2, (length or src_len) - 2) if length else tgt_len
        return (_ints(rng, vocab, n, s, low=low), _pad_mask(n, s),
                _ints(rng, vocab, n, t, low=low))
    return make


# ----------------------------------------------------------------------------------
# Models
# ----------------------------------------------------------------------------------

def _decoder_lm(cls_name, cfg_name, **cfg):
    """A factory for a decoder-only model `cls_name` built from `cfg_name`(**cfg)."""
    def make():
        conf = getattr(T, cfg_name)(**cfg)
        return Wrap(getattr(T, cls_name)(conf), ["input_ids", "attention_mask"],
                    ["last_hidden_state"], use_cache=False)
    return make


def _make(cls_name, cfg_name, ins, outs, kw=None, **cfg):
    """A factory for `cls_name`(`cfg_name`(**cfg)) wrapped with inputs `ins` and
    output fields `outs`."""
    def make():
        conf = getattr(T, cfg_name)(**cfg)
        return Wrap(getattr(T, cls_name)(conf), ins, outs, **(kw or {}))
    return make


def gpt2_cached():
    """GPT-2 LM head with a key/value cache as plain tensors."""
    conf = T.GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=2,
                        n_inner=32, initializer_range=INIT)
    return CachedLM(T.GPT2LMHeadModel(conf), 2)


def gpt2_cached_inputs(rng, n, length):
    """One new token per row after `length` (default 5) cached positions: ids (N, 1),
    mask (N, P + 1) with padding in the past, keys/values (N, 2, P, 16) per layer."""
    past = length or 5
    ids = _ints(rng, 64, n, 1)
    mask = torch.ones(n, past + 1, dtype=torch.int64)
    if n > 1:
        mask[1, :1] = 0  # a left-padded row: its first cached position is padding
    kv = [_rand(rng, n, 2, past, 16) for _ in range(4)]
    return (ids, mask, *kv)


def wav_inputs(samples):
    """input_values (N, samples) of a waveform."""
    def make(rng, n, length):
        return (_rand(rng, n, length or samples),)
    return make


def whisper_inputs(rng, n, length):
    """input_features (N, 16 mel bins, 32 frames), decoder_input_ids (N, T)."""
    return _rand(rng, n, 16, 32), _ints(rng, 64, n, length or 5)


def clip_inputs(rng, n, length):
    """input_ids (N, L) ending in the end-of-text id 63, mask, pixel_values."""
    length = length or 7
    ids = _ints(rng, 62, n, length, low=1)
    mask = _pad_mask(n, length)
    for i in range(n):
        ids[i, int(mask[i].sum()) - 1] = 63  # the end token CLIP pools at
    return ids, mask, _rand(rng, n, 3, 32, 32)


def catalogue():
    """The models to export: a list of dicts with name, module factory `make`, `inputs`
    (a function of (rng, batch, seq) giving a tuple of tensors), input names `ins`,
    output names `outs`, dynamic axes `dyn` (or None), `alt` (the second (batch, seq)
    for dynamic exports) and `jobs`: (exporter, opset, dynamic) triples."""
    seq = {0: "batch", 1: "seq"}
    bat = {0: "batch"}
    txt = ["input_ids", "attention_mask"]
    txt_dyn = {"input_ids": seq, "attention_mask": seq, "hidden": seq}
    lm = dict(vocab_size=64, hidden_size=32, intermediate_size=32, num_hidden_layers=1,
              num_attention_heads=2, max_position_embeddings=16, initializer_range=INIT)
    lm2 = {**lm, "num_hidden_layers": 2}  # BERT keeps two layers, most one (size)
    std = [("ts", 17, True), ("dynamo", 18, False)]
    cat = [
        dict(name="bert", make=_make("BertModel", "BertConfig", txt,
                                     ["last_hidden_state", "pooler_output"], **lm2),
             inputs=text_inputs(64, 8), ins=txt, outs=["hidden", "pooled"],
             dyn={**txt_dyn, "pooled": bat}, alt=(3, 5),
             jobs=[("ts", 17, True), ("dynamo", 23, True)]),
        dict(name="distilbert",
             make=_make("DistilBertModel", "DistilBertConfig", txt, ["last_hidden_state"],
                        vocab_size=64, dim=32, n_layers=1, n_heads=2, hidden_dim=32,
                        max_position_embeddings=32, initializer_range=INIT),
             inputs=text_inputs(64, 8), ins=txt, outs=["hidden"], dyn=txt_dyn,
             alt=(1, 6), jobs=[("ts", 20, True)]),
        dict(name="roberta",
             make=_make("RobertaModel", "RobertaConfig", txt, ["last_hidden_state"],
                        pad_token_id=1, **{**lm, "max_position_embeddings": 20}),
             inputs=text_inputs(64, 8, low=3), ins=txt, outs=["hidden"], dyn=txt_dyn,
             alt=(3, 6), jobs=[("ts", 17, True)]),
        dict(name="albert",
             make=_make("AlbertModel", "AlbertConfig", txt,
                        ["last_hidden_state", "pooler_output"], embedding_size=16, **lm),
             inputs=text_inputs(64, 8), ins=txt, outs=["hidden", "pooled"],
             dyn={**txt_dyn, "pooled": bat}, alt=(3, 5),
             jobs=[("dynamo", 23, False)]),
        dict(name="deberta_v2",
             make=_make("DebertaV2Model", "DebertaV2Config", txt, ["last_hidden_state"],
                        relative_attention=True, position_buckets=8,
                        max_relative_positions=16, pos_att_type=["p2c", "c2p"],
                        norm_rel_ebd="layer_norm", share_att_key=True, **lm),
             inputs=text_inputs(64, 8), ins=txt, outs=["hidden"], dyn=txt_dyn,
             alt=(3, 6), jobs=[("dynamo", 18, False)]),
        dict(name="electra",
             make=_make("ElectraModel", "ElectraConfig", txt, ["last_hidden_state"],
                        embedding_size=16, **lm),
             inputs=text_inputs(64, 8), ins=txt, outs=["hidden"], dyn=txt_dyn,
             alt=(1, 4), jobs=[("dynamo", 23, True)]),
        dict(name="gpt2",
             make=_make("GPT2LMHeadModel", "GPT2Config", txt, ["logits"],
                        kw=dict(use_cache=False), vocab_size=64, n_positions=32, n_embd=32,
                        n_layer=1, n_head=2, n_inner=32, initializer_range=INIT),
             inputs=text_inputs(64, 8), ins=txt, outs=["logits"],
             dyn={"input_ids": seq, "attention_mask": seq, "logits": seq}, alt=(3, 5),
             jobs=[("dynamo", 18, True)]),
        dict(name="gpt2_kv_cache", make=gpt2_cached, inputs=gpt2_cached_inputs,
             ins=["input_ids", "attention_mask", "past_key_0", "past_value_0",
                  "past_key_1", "past_value_1"],
             outs=["logits", "present_key_0", "present_value_0", "present_key_1",
                   "present_value_1"],
             dyn={"input_ids": {0: "batch"}, "attention_mask": {0: "batch", 1: "total"},
                  **{f"past_{kv}_{i}": {0: "batch", 2: "past"} for kv in ("key", "value")
                     for i in range(2)},
                  **{f"present_{kv}_{i}": {0: "batch", 2: "total"}
                     for kv in ("key", "value") for i in range(2)},
                  "logits": {0: "batch"}},
             alt=(3, 3), jobs=[("ts", 17, True), ("dynamo", 18, True)]),
        dict(name="gpt_neox",
             make=_decoder_lm("GPTNeoXModel", "GPTNeoXConfig", rotary_pct=0.5, **lm),
             inputs=text_inputs(64, 8), ins=txt, outs=["hidden"], dyn=txt_dyn,
             alt=(3, 5), jobs=[("ts", 17, True), ("dynamo", 23, False)]),
        dict(name="gptj",
             make=_make("GPTJModel", "GPTJConfig", txt, ["last_hidden_state"],
                        kw=dict(use_cache=False), vocab_size=64, n_positions=32, n_embd=32,
                        n_layer=1, n_head=2, n_inner=32, rotary_dim=8, initializer_range=INIT),
             inputs=text_inputs(64, 8), ins=txt, outs=["hidden"], dyn=txt_dyn,
             alt=(1, 6), jobs=[("ts", 20, False), ("dynamo", 23, False)]),
        dict(name="opt",
             make=_make("OPTModel", "OPTConfig", txt, ["last_hidden_state"],
                        kw=dict(use_cache=False), vocab_size=64, hidden_size=32,
                        ffn_dim=32, num_hidden_layers=1, num_attention_heads=2,
                        max_position_embeddings=32, word_embed_proj_dim=32,
                        init_std=INIT),
             inputs=text_inputs(64, 8), ins=txt, outs=["hidden"], dyn=txt_dyn,
             alt=(3, 5), jobs=[("ts", 20, True), ("dynamo", 18, False)]),
        dict(name="llama",
             make=_decoder_lm("LlamaModel", "LlamaConfig", num_key_value_heads=1,
                              **{**lm, "num_attention_heads": 4}),
             inputs=text_inputs(64, 8), ins=txt, outs=["hidden"], dyn=txt_dyn,
             alt=(3, 5),
             # the last fails (kept for the manifest): onnxruntime refuses the dynamo
             # exporter's opset-23 RotaryEmbedding when the batch is dynamic (its cos/sin
             # cache keeps batch 1)
             jobs=[("ts", 17, True), ("dynamo", 18, True), ("dynamo", 23, True)]),
        dict(name="mistral",
             make=_decoder_lm("MistralModel", "MistralConfig", num_key_value_heads=2,
                              sliding_window=4, **{**lm, "num_attention_heads": 4}),
             inputs=text_inputs(64, 8), ins=txt, outs=["hidden"], dyn=txt_dyn,
             alt=(1, 7), jobs=[("ts", 17, True), ("dynamo", 23, False)]),
        dict(name="qwen2",
             make=_decoder_lm("Qwen2Model", "Qwen2Config", num_key_value_heads=1, **lm),
             inputs=text_inputs(64, 8), ins=txt, outs=["hidden"], dyn=txt_dyn,
             alt=(3, 5), jobs=[("ts", 20, True), ("dynamo", 23, False)]),
        dict(name="phi",
             make=_decoder_lm("PhiModel", "PhiConfig", partial_rotary_factor=0.5, **lm),
             inputs=text_inputs(64, 8), ins=txt, outs=["hidden"], dyn=txt_dyn,
             alt=(3, 5), jobs=[("ts", 17, True), ("dynamo", 18, True)]),
        dict(name="gemma",
             make=_decoder_lm("GemmaModel", "GemmaConfig", num_key_value_heads=1,
                              head_dim=16, **lm),
             inputs=text_inputs(64, 8), ins=txt, outs=["hidden"], dyn=txt_dyn,
             alt=(3, 5), jobs=[("ts", 20, True), ("dynamo", 23, False)]),
        dict(name="t5",
             make=_make("T5Model", "T5Config",
                        ["input_ids", "attention_mask", "decoder_input_ids"],
                        ["last_hidden_state", "encoder_last_hidden_state"],
                        kw=dict(use_cache=False), vocab_size=64, d_model=32, d_kv=16,
                        d_ff=32, num_layers=1, num_heads=2,
                        relative_attention_num_buckets=8,
                        relative_attention_max_distance=16, initializer_factor=1.0),
             inputs=seq2seq_inputs(64, 8, 5),
             ins=["input_ids", "attention_mask", "decoder_input_ids"],
             outs=["hidden", "encoder_hidden"],
             dyn={"input_ids": seq, "attention_mask": seq,
                  "decoder_input_ids": {0: "batch", 1: "tgt"},
                  "hidden": {0: "batch", 1: "tgt"}, "encoder_hidden": seq},
             alt=(3, 6), jobs=[("ts", 17, True), ("dynamo", 23, False)]),
        dict(name="bart",
             make=_make("BartModel", "BartConfig",
                        ["input_ids", "attention_mask", "decoder_input_ids"],
                        ["last_hidden_state", "encoder_last_hidden_state"],
                        kw=dict(use_cache=False), vocab_size=64, d_model=32,
                        encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
                        max_position_embeddings=32, init_std=INIT),
             inputs=seq2seq_inputs(64, 8, 5, low=3),
             ins=["input_ids", "attention_mask", "decoder_input_ids"],
             outs=["hidden", "encoder_hidden"],
             dyn={"input_ids": seq, "attention_mask": seq,
                  "decoder_input_ids": {0: "batch", 1: "tgt"},
                  "hidden": {0: "batch", 1: "tgt"}, "encoder_hidden": seq},
             alt=(3, 6), jobs=std),
        dict(name="whisper",
             make=_make("WhisperModel", "WhisperConfig",
                        ["input_features", "decoder_input_ids"],
                        ["last_hidden_state", "encoder_last_hidden_state"],
                        kw=dict(use_cache=False), vocab_size=64, num_mel_bins=16,
                        d_model=32, encoder_layers=1, decoder_layers=1,
                        encoder_attention_heads=2, decoder_attention_heads=2,
                        encoder_ffn_dim=32, decoder_ffn_dim=32, max_source_positions=16,
                        max_target_positions=16, pad_token_id=0, bos_token_id=1,
                        eos_token_id=2, decoder_start_token_id=1, init_std=INIT),
             inputs=whisper_inputs, ins=["input_features", "decoder_input_ids"],
             outs=["hidden", "encoder_hidden"],
             dyn={"input_features": bat, "decoder_input_ids": {0: "batch", 1: "tgt"},
                  "hidden": {0: "batch", 1: "tgt"}, "encoder_hidden": bat},
             alt=(3, 4), jobs=[("dynamo", 18, True), ("ts", 17, False)]),
        dict(name="vit",
             make=_make("ViTForImageClassification", "ViTConfig", ["pixel_values"],
                        ["logits"], image_size=32, patch_size=8, num_labels=5, **lm),
             inputs=image_inputs(32), ins=["pixel_values"], outs=["logits"],
             dyn={"pixel_values": bat, "logits": bat}, alt=(1, None),
             jobs=[("dynamo", 18, True)]),
        # DeiT and ResNet take other image sizes: DeiT resamples its position
        # embeddings (bicubic interpolate) to the patch grid of the input
        dict(name="deit",
             make=_make("DeiTForImageClassificationWithTeacher", "DeiTConfig",
                        ["pixel_values"], ["logits"], image_size=32, patch_size=8,
                        num_labels=5, kw=dict(interpolate_pos_encoding=True), **lm),
             inputs=image_inputs(32), ins=["pixel_values"], outs=["logits"],
             dyn={"pixel_values": {0: "batch", 2: "h", 3: "w"}, "logits": bat},
             alt=(1, (48, 40)), jobs=[("ts", 20, True)]),
        dict(name="swin",
             make=_make("SwinModel", "SwinConfig", ["pixel_values"],
                        ["last_hidden_state", "pooler_output"], image_size=32,
                        patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[1, 2],
                        window_size=4, initializer_range=INIT),
             inputs=image_inputs(32), ins=["pixel_values"], outs=["hidden", "pooled"],
             dyn={"pixel_values": bat, "hidden": bat, "pooled": bat}, alt=(1, None),
             jobs=[("ts", 20, True), ("dynamo", 23, False)]),
        dict(name="convnext",
             make=_make("ConvNextForImageClassification", "ConvNextConfig",
                        ["pixel_values"], ["logits"], hidden_sizes=[8, 8, 16, 16],
                        depths=[1, 1, 1, 1], num_labels=5, initializer_range=INIT),
             inputs=image_inputs(32), ins=["pixel_values"], outs=["logits"],
             dyn={"pixel_values": bat, "logits": bat}, alt=(1, None),
             jobs=[("ts", 20, True), ("dynamo", 23, False)]),
        dict(name="resnet",
             make=_make("ResNetForImageClassification", "ResNetConfig", ["pixel_values"],
                        ["logits"], embedding_size=8, hidden_sizes=[8, 16, 24, 32],
                        depths=[1, 1, 1, 1], layer_type="bottleneck", num_labels=5),
             inputs=image_inputs(32), ins=["pixel_values"], outs=["logits"],
             dyn={"pixel_values": {0: "batch", 2: "h", 3: "w"}, "logits": bat},
             alt=(1, (40, 24)), jobs=[("ts", 17, True), ("dynamo", 23, False)]),
        dict(name="segformer",
             make=_make("SegformerForSemanticSegmentation", "SegformerConfig",
                        ["pixel_values"], ["logits"], num_encoder_blocks=2,
                        depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32],
                        patch_sizes=[7, 3], strides=[4, 2], num_attention_heads=[1, 2],
                        mlp_ratios=[2, 2], decoder_hidden_size=32, num_labels=4,
                        initializer_range=INIT),
             inputs=image_inputs(32), ins=["pixel_values"], outs=["logits"],
             dyn={"pixel_values": bat, "logits": bat}, alt=(3, None),
             jobs=[("dynamo", 18, False)]),
        dict(name="mobilevit",
             make=_make("MobileViTForImageClassification", "MobileViTConfig",
                        ["pixel_values"], ["logits"], image_size=32, patch_size=2,
                        hidden_sizes=[8, 8, 16], expand_ratio=1.0, mlp_ratio=1.0,
                        neck_hidden_sizes=[8, 8, 8, 8, 8, 16, 16],
                        num_attention_heads=2, num_labels=5, initializer_range=INIT),
             inputs=image_inputs(32), ins=["pixel_values"], outs=["logits"],
             dyn={"pixel_values": bat, "logits": bat}, alt=(1, None),
             jobs=[("dynamo", 18, False)]),
        dict(name="wav2vec2",
             make=_make("Wav2Vec2Model", "Wav2Vec2Config", ["input_values"],
                        ["last_hidden_state"], hidden_size=32, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, conv_dim=(16, 16),
                        conv_kernel=(10, 3), conv_stride=(5, 2), num_conv_pos_embeddings=16,
                        num_conv_pos_embedding_groups=4, vocab_size=32,
                        initializer_range=INIT),
             inputs=wav_inputs(400), ins=["input_values"], outs=["hidden"],
             dyn={"input_values": seq, "hidden": seq}, alt=(3, 320),
             jobs=[("ts", 17, True), ("dynamo", 18, True)]),
        dict(name="clip",
             make=lambda: Wrap(T.CLIPModel(T.CLIPConfig(
                 text_config=dict(vocab_size=64, hidden_size=32, intermediate_size=32,
                                  num_hidden_layers=1, num_attention_heads=2,
                                  max_position_embeddings=16, eos_token_id=63),
                 vision_config=dict(hidden_size=32, intermediate_size=32,
                                    num_hidden_layers=1, num_attention_heads=2,
                                    image_size=32, patch_size=8),
                 projection_dim=16)), ["input_ids", "attention_mask", "pixel_values"],
                 ["logits_per_image", "text_embeds", "image_embeds"]),
             inputs=clip_inputs, ins=["input_ids", "attention_mask", "pixel_values"],
             outs=["logits_per_image", "text_embeds", "image_embeds"], dyn=None,
             jobs=[("dynamo", 23, False)]),
        # more decoder families: ALiBi (Bloom), logit soft-capping and sliding windows
        # (Gemma 2), a sparse mixture of experts (Mixtral: TopK routing, OneHot, NonZero,
        # ScatterElements in the TorchScript graph of its per-expert loop)
        dict(name="bloom",
             make=_make("BloomModel", "BloomConfig", txt, ["last_hidden_state"],
                        kw=dict(use_cache=False), vocab_size=64, hidden_size=32, n_layer=1,
                        n_head=2, initializer_range=INIT),
             inputs=text_inputs(64, 8), ins=txt, outs=["hidden"], dyn=txt_dyn,
             alt=(3, 5), jobs=[("dynamo", 18, True)]),
        dict(name="gemma2",
             make=_decoder_lm("Gemma2Model", "Gemma2Config", head_dim=16,
                              num_key_value_heads=1, sliding_window=4, **lm),
             inputs=text_inputs(64, 8), ins=txt, outs=["hidden"], dyn=txt_dyn,
             alt=(1, 6), jobs=[("dynamo", 18, True)]),
        dict(name="mixtral", experts="eager",
             make=_decoder_lm("MixtralModel", "MixtralConfig", num_key_value_heads=1,
                              num_local_experts=4, num_experts_per_tok=2, **lm),
             inputs=text_inputs(64, 8), ins=txt, outs=["hidden"], dyn=txt_dyn,
             alt=(3, 5),
             # torch.export fails on the eager per-expert loop (kept for the manifest)
             jobs=[("ts", 17, True), ("dynamo", 18, True)]),
        dict(name="wavlm",
             make=_make("WavLMModel", "WavLMConfig", ["input_values"],
                        ["last_hidden_state"], hidden_size=32, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, conv_dim=(16, 16),
                        conv_kernel=(10, 3), conv_stride=(5, 2), num_conv_pos_embeddings=16,
                        num_conv_pos_embedding_groups=4, num_buckets=16,
                        max_bucket_distance=32, vocab_size=32, initializer_range=INIT),
             inputs=wav_inputs(400), ins=["input_values"], outs=["hidden"],
             dyn={"input_values": seq, "hidden": seq}, alt=(3, 320),
             jobs=[("dynamo", 18, True)]),
    ]
    # variants of the models above: float16 and bfloat16 weights, eager (not sdpa)
    # attention, and non-default exporter flags (initializers listed as graph inputs,
    # no constant folding, so BatchNormalization and weight Transposes stay in the graph)
    by_name = {e["name"]: e for e in cat}
    cat += [
        dict(by_name["gpt2"], name="gpt2_fp16", half=True, jobs=[("dynamo", 18, False)]),
        dict(by_name["vit"], name="vit_fp16", half=True, jobs=[("ts", 17, False)]),
        dict(by_name["gpt2"], name="gpt2_bf16", bf16=True, jobs=[("dynamo", 18, False)]),
        dict(by_name["llama"], name="llama_bf16", bf16=True, jobs=[("dynamo", 18, False)]),
        dict(by_name["llama"], name="llama_eager", attn="eager",
             jobs=[("dynamo", 23, False)]),
        dict(by_name["distilbert"], name="distilbert_init_inputs",
             export_kw=dict(keep_initializers_as_inputs=True), jobs=[("ts", 17, False)]),
        dict(by_name["resnet"], name="resnet_no_folding",
             export_kw=dict(do_constant_folding=False), jobs=[("ts", 20, True)]),
    ]
    return cat


# ----------------------------------------------------------------------------------
# Export
# ----------------------------------------------------------------------------------

def _build(entry):
    """Instantiate `entry`'s model with seeded weights and randomised BatchNorm
    statistics (so BN folding is exercised), in eval mode."""
    torch.manual_seed(0)
    model = entry["make"]()
    if entry.get("attn"):  # another attention implementation than HF's default (sdpa)
        model.model.set_attn_implementation(entry["attn"])
    if entry.get("experts"):  # a mixture-of-experts implementation (HF's default one,
        # grouped_mm, uses aten::histc, which neither exporter can write)
        model.model.set_experts_implementation(entry["experts"])
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, nn.modules.batchnorm._BatchNorm) and mod.running_mean \
                    is not None:
                mod.running_mean.copy_(torch.randn(mod.num_features, generator=g) * 0.1)
                mod.running_var.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
                if mod.affine:
                    mod.weight.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
                    mod.bias.copy_(torch.randn(mod.num_features, generator=g) * 0.1)
    if entry.get("half"):
        model = model.half()
    if entry.get("bf16"):
        model = model.to(torch.bfloat16)
    return model.eval()


def _inputs(entry, seed, n, length):
    """The entry's inputs for batch `n` and sequence `length` from `seed` (float16
    for half models)."""
    args = entry["inputs"](np.random.default_rng(seed), n, length)
    if entry.get("half"):
        args = tuple(a.half() if a.is_floating_point() else a for a in args)
    return args


def _strip_node_metadata(path):
    """Drop the nodes' metadata_props (FX provenance strings) to keep the file small."""
    model = onnx.load(path)
    graphs = [model.graph]
    while graphs:  # subgraphs too (If/Loop/Scan bodies)
        graph = graphs.pop()
        for node in graph.node:
            del node.metadata_props[:]
            for attr in node.attribute:
                if attr.HasField("g"):
                    graphs.append(attr.g)
                graphs.extend(attr.graphs)
    onnx.save(model, path)


def _save_inputs(out_dir, stem, tensors, suffix, kind="in"):
    """np.save each tensor as `stem`.<kind><k>`suffix`; the file names."""
    files = []
    for k, a in enumerate(tensors):
        f = f"{stem}.{kind}{k}{suffix}"
        np.save(os.path.join(out_dir, f), a.numpy(), allow_pickle=False)
        files.append(f)
    return files


def _ort_vs_torch(path, model, entry, args):
    """The largest absolute difference between onnxruntime's outputs of the exported
    file and eager torch's for `args` (raises when onnxruntime refuses the file)."""
    import onnxruntime as ort  # only this check needs it

    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    takes = {i.name for i in sess.get_inputs()}
    feeds = {n: a.numpy() for n, a in zip(entry["ins"], args) if n in takes}
    got = sess.run(entry["outs"], feeds)
    with torch.no_grad():
        want = model(*args)
    return max(float(np.max(np.abs(g.astype(np.float64) - w.numpy()))) if g.size else 0.0
               for g, w in zip(got, want))


def _error(e, prefix=""):
    """The first line of exception `e` (at most 300 characters, terminal colour codes
    removed) for the manifest."""
    msg = re.sub(r"\x1b\[[0-9;]*m", "", str(e)).strip().splitlines()
    return f"{prefix}{type(e).__name__}: {msg[0][:300] if msg else ''}"


def export_entry(entry, out_dir, exporter, opset, dynamic):
    """Export one model with `exporter` ('ts' or 'dynamo') at `opset`, with dynamic
    axes when `dynamic`; save its inputs; return its manifest record."""
    stem = f"{entry['name']}__{exporter}_op{opset}{'_dyn' if dynamic else ''}"
    path = os.path.join(out_dir, stem + ".onnx")
    rec = dict(name=entry["name"], file=stem + ".onnx", exporter=exporter, opset=opset,
               dynamic=dynamic, inputs=entry["ins"], outputs=entry["outs"])
    try:
        model = _build(entry)
        args = _inputs(entry, 123, 2, None)
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            res = model(*args)  # the model itself must run in eager torch first
            assert len(res) == len(entry["outs"]), f"{len(res)} outputs"
            kw = dict(input_names=entry["ins"], output_names=entry["outs"],
                      opset_version=opset)
            if dynamic and exporter == "ts":
                kw["dynamic_axes"] = {k: v for k, v in entry["dyn"].items()
                                      if k in entry["ins"] + entry["outs"]}
            elif dynamic:  # the dynamo exporter cannot turn dynamic_axes of *args into
                # dynamic_shapes itself: give torch.export its own spec, one per input
                dim = torch.export.Dim.DYNAMIC
                kw["dynamic_shapes"] = (tuple({ax: dim for ax in entry["dyn"].get(k, {})}
                                              or None for k in entry["ins"]),)
            kw.update(entry.get("export_kw", {}))  # the entry's non-default flags
            if exporter == "ts":
                torch.onnx.export(model, args, path, dynamo=False,
                                  **{"do_constant_folding": True, **kw})
            else:
                torch.onnx.export(model, args, path, dynamo=True, external_data=False,
                                  verbose=False, **kw)
    except Exception as e:  # recorded, not fatal: a failed export is data too
        rec["error"] = _error(e)
        if os.path.exists(path):
            os.remove(path)
        return rec
    if exporter == "dynamo" and os.path.getsize(path) > SIZE_LIMIT:
        _strip_node_metadata(path)
        rec["node_metadata_stripped"] = True
    rec["size"] = os.path.getsize(path)
    if entry.get("bf16"):  # onnxruntime's CPU provider has no bfloat16 Add/Mul/MatMul:
        # eager torch's outputs (float32 .npy, exact for bfloat16) are the reference
        with torch.no_grad():
            want = model(*args)
        rec["reference"] = "torch"
        rec["input_files"] = _save_inputs(out_dir, stem, args, ".npy")
        rec["output_files"] = _save_inputs(out_dir, stem, [w.float() for w in want],
                                           ".npy", "out")
        return rec
    sizes = [args]
    if dynamic:
        b, length = entry["alt"]
        sizes.append(_inputs(entry, 7, b, length))
    try:  # a file onnxruntime refuses or gets wrong is no reference for onegraph
        rec["ort_vs_torch"] = [_ort_vs_torch(path, model, entry, a) for a in sizes]
    except Exception as e:
        rec["error"] = _error(e, "onnxruntime: ")
        os.remove(path)
        return rec
    if max(rec["ort_vs_torch"]) > (1e-2 if entry.get("half") else 1e-3):
        rec["error"] = f"onnxruntime differs from torch by {max(rec['ort_vs_torch']):.3g}"
        os.remove(path)
        return rec
    rec["input_files"] = _save_inputs(out_dir, stem, args, ".npy")
    if dynamic:
        rec["alt_input_files"] = _save_inputs(out_dir, stem, sizes[1], ".alt.npy")
    return rec


def main(argv=None):
    """Export the catalogue (or `--only` names) into the output folder; write
    manifest.json (every attempt) and index.json (the exports that worked) there."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--no-dynamo", action="store_true")
    a = ap.parse_args(argv)
    os.makedirs(a.out_dir, exist_ok=True)
    manifest = os.path.join(a.out_dir, "manifest.json")
    records = []
    if a.only and os.path.exists(manifest):  # keep the other models' records
        with open(manifest, encoding="utf-8") as f:
            records = [r for r in json.load(f) if r["name"] not in a.only]
    for entry in catalogue():
        if a.only and entry["name"] not in a.only:
            continue
        for exporter, opset, dyn in entry["jobs"]:
            if exporter == "dynamo" and a.no_dynamo:
                continue
            rec = export_entry(entry, a.out_dir, exporter, opset, dyn)
            status = rec.get("error") or f"{rec['size']:,} bytes"
            print(f"{rec['file']:<40} {status}", flush=True)
            records.append(rec)
    records.sort(key=lambda r: r["file"])
    with open(manifest, "w", encoding="utf-8") as f:
        json.dump(records, f, indent=1)
    index = {r["file"]: {k: v for k, v in r.items()
                         if k not in ("file", "name", "size", "ort_vs_torch")}
             for r in records if "error" not in r}
    with open(os.path.join(a.out_dir, "index.json"), "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

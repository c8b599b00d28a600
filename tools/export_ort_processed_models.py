"""Write tests/convert/data/ort_processed/: corpus models as onnxruntime's own tools
post-process them (the pipeline Hugging Face Optimum runs: ORTOptimizer, float16
conversion, ORTQuantizer, and onnxruntime's offline graph optimization).

Sources are models of tests/convert/data/hf_exported/ and timm_exported/ (their seeded
inputs are copied) plus two eager-attention Hugging Face models exported
here (BERT and DistilBERT with `attn_implementation="eager"`: the sdpa attention of the
stored exports is not written the way the optimizer's Attention and
EmbedLayerNormalization fusions look for). Variants, each saved as
<source>__<variant>.onnx:

- opt1, opt99: `onnxruntime.transformers.optimizer.optimize_model` (model_type, num_heads
  and hidden_size from the model's config) at opt_level 1 and, when it differs, 99
  ("optnf" in the table: without the float16 copy); optgelu: with the Gelu
  approximation (Optimum's O3); optmha, optmha_fp16: the GPU graph with
  MultiHeadAttention (Optimum's O4, float16);
  opt1_fp16: opt1 converted by `convert_float_to_float16` (keep_io_types=True; not
  of opt99, whose NCHWc Convs onnxruntime then refuses in float16); fp16: a plain
  model converted by onnxruntime.transformers.float16 (keep_io_types=True).
- qdyn_s8, qdyn_u8pc: `quantize_dynamic` with QInt8 weights, and QUInt8 per-channel.
- qdq, qop, qdqpc: `quantize_static` (QDQ and QOperator formats; qdqpc QDQ with
  per-channel weights) over a seeded calibration set.
- ortext, ortall (and qdq_ortall, qdyn_s8_ortall, opt_ortall: applied to that variant;
  opt_qdyn_s8 quantizes opt1): onnxruntime's own graph optimizations at
  ORT_ENABLE_EXTENDED / ORT_ENABLE_ALL, saved by SessionOptions.optimized_model_filepath
  with one thread. ORT_ENABLE_ALL (and opt_level 99) write NCHWc ops for the generating
  machine's vector width (onnxruntime warns that such files are hardware specific): the
  files here were written on an AVX-512 x86-64 CPU.

index.json lists per file: source, variant, tool and settings, inputs, input files,
outputs, contrib op counts; `failures` lists where onnxruntime's tool crashed or its
session refused the result (those variants are skipped). Needs torch, transformers,
onnxruntime (with sympy) and onnx. Run from the repo root:

    /tmp/torchvenv/bin/python tools/export_ort_processed_models.py
"""

from __future__ import annotations

import collections
import copy
import json
import logging
import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "convert" / "data"
OUT = DATA / "ort_processed"
SEED = 0

# (source key, corpus, optimizer model_type, num_heads, hidden_size, variants). Sizes
# from tools/export_hf_models.py (hidden 32, 2 heads; Llama 4 query heads) and
# tools/export_timm_models.py (ViT: embed_dim 16, 2 heads); 0 lets the optimizer
# detect them (Swin's heads differ per stage).
OPT = ("opt",)
HF = [
    ("bert_eager", "here", "bert", 2, 32, OPT + ("~qdyn_s8", "qdyn_s8_ortall",
                                                 "opt_qdyn_s8", "opt_ortall", "~qdq",
                                                 "qdq_ortall", "opt1_fp16_ortall",
                                                 "opt_q4")),
    ("distilbert_eager", "here", "bert", 2, 32, OPT + ("opt_qdyn_u8pc", "qop", "qdq16",
                                                       "optmha", "optgelu")),
    ("bert__ts_op17_dyn", "hf_exported", "bert", 2, 32, ("ortext",)),
    ("albert__dynamo_op23", "hf_exported", "bert", 2, 32, OPT),
    ("electra__dynamo_op23_dyn", "hf_exported", "bert", 2, 32, OPT + ("opt_qdyn_s8",)),
    ("roberta__ts_op17_dyn", "hf_exported", "bert", 2, 32, ("qdyn_u8pc", "qop")),
    ("gpt2_kv_cache__ts_op17_dyn", "hf_exported", "gpt2", 2, 32,
     OPT + ("~qdyn_s8", "qdyn_s8_ortall", "q4a4")),
    ("llama__dynamo_op18_dyn", "hf_exported", "gpt2", 4, 32,
     OPT + ("qdyn_u8pc", "q4", "q4a4", "q8", "~qdq", "qdq_ortall")),
    ("t5__ts_op17_dyn", "hf_exported", "t5", 2, 32, ("optnf", "q4a4")),
    ("bart__ts_op17_dyn", "hf_exported", "bart", 2, 32, ("optnf",)),
    ("whisper__dynamo_op18_dyn", "hf_exported", "bart", 2, 32, ("optnf", "qdyn_u8pc")),
    ("vit__dynamo_op18_dyn", "hf_exported", "vit", 2, 32, OPT + ("ortall",)),
    ("segformer__dynamo_op18", "hf_exported", None, 0, 0, ("qop",)),
    ("opt__dynamo_op18", "hf_exported", "bart", 2, 32, ("~qop", "qop_ortall")),
    ("wav2vec2__ts_op17_dyn", "hf_exported", "bert", 2, 32, OPT + ("~qdq", "qdq_ortall")),
]
TIMM = [
    ("resnet__ts_op17_dyn", "timm_exported", None, 0, 0,
     ("ortall", "qdq", "qop", "qdq_ortall", "qop_ortall", "fp16", "qdqs8")),
    ("rexnet__dynamo_op18", "timm_exported", None, 0, 0, ("qop",)),
    ("mobilenetv3__dynamo_op23", "timm_exported", None, 0, 0,
     ("~qdq", "qdq_ortall")),
    ("convnext__ts_op17_dyn", "timm_exported", None, 0, 0, ("ortall", "qop")),
    ("densenet__ts_op20", "timm_exported", None, 0, 0, ("qdq", "~qop", "qop_ortall")),
    ("darknet__ts_op17", "timm_exported", None, 0, 0, ("~qop", "qop_ortall")),
    ("repvgg_reparam__ts_op17_dyn", "timm_exported", None, 0, 0,
     ("ortext", "qop", "qop_ortall", "~qdqpc", "qdqpc_ortall", "fp16", "qdq16",
      "qdqs8")),
    ("mixer__ts_op20", "timm_exported", None, 0, 0, ("qdq",)),
    ("resnet_d__dynamo_op23_dyn", "timm_exported", None, 0, 0, ("qdqs8",)),
    ("volo__dynamo_op18", "timm_exported", None, 0, 0, ("qops8",)),
]
CONTRIB = ("com.microsoft", "com.microsoft.nchwc")


def _quiet():
    """Silence the optimizer's and exporters' warnings (they log per node)."""
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    ort.set_default_logger_severity(3)


# ----------------------------------------------------------------------------------
# Sources
# ----------------------------------------------------------------------------------

def _export_eager(name: str, work: Path) -> dict:
    """Export a tiny eager-attention BERT or DistilBERT with TorchScript (opset 17,
    dynamic batch and sequence) and save its seeded inputs in OUT; return its entry."""
    import torch
    import transformers as T

    class Wrap(torch.nn.Module):
        """The model's last_hidden_state from (input_ids, attention_mask)."""

        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              return_dict=True)["last_hidden_state"]

    torch.manual_seed(SEED)
    if name == "bert_eager":
        conf = T.BertConfig(vocab_size=64, hidden_size=32, intermediate_size=32,
                            num_hidden_layers=2, num_attention_heads=2,
                            max_position_embeddings=16, attn_implementation="eager")
        model = T.BertModel(conf)
    else:
        conf = T.DistilBertConfig(vocab_size=64, dim=32, n_layers=2, n_heads=2,
                                  hidden_dim=32, max_position_embeddings=16,
                                  attn_implementation="eager")
        model = T.DistilBertModel(conf)
    model = Wrap(model.eval())
    rng = np.random.default_rng(SEED)
    files = {}
    for tag, (n, t) in (("", (2, 8)), (".alt", (3, 5))):
        ids = rng.integers(1, 64, (n, t)).astype(np.int64)
        mask = np.ones((n, t), np.int64)
        mask[-1, t - 2:] = 0  # a right-padded row, so the mask matters
        for k, a in enumerate((ids, mask)):
            fname = f"{name}.in{k}{tag}.npy"
            np.save(OUT / fname, a, allow_pickle=False)
            files.setdefault(tag, []).append(fname)
    seq = {0: "batch", 1: "seq"}
    path = work / f"{name}.onnx"
    args = tuple(torch.from_numpy(np.load(OUT / f)) for f in files[""])
    with torch.no_grad():
        torch.onnx.export(model, args, str(path), input_names=["input_ids", "attention_mask"],
                          output_names=["hidden"], opset_version=17, dynamo=False,
                          dynamic_axes={"input_ids": seq, "attention_mask": seq,
                                        "hidden": seq})
    return {"path": path, "inputs": ["input_ids", "attention_mask"], "outputs": ["hidden"],
            "input_files": files[""], "alt_input_files": files[".alt"],
            "source": f"exported here: transformers {name[:-6]} with eager attention, "
                      "torch.onnx.export(dynamo=False, opset_version=17)"}


def _corpus_source(key: str, corpus: str, stem: str) -> dict:
    """The source entry of a stored corpus model; its input files are copied to OUT
    (as <stem>.inK[.alt].npy) so that the corpus does not depend on the other one."""
    with open(DATA / corpus / "index.json", encoding="utf-8") as f:
        entry = json.load(f)[f"{key}.onnx"]
    files = {}
    for tag, names in (("", entry["input_files"]),
                       (".alt", entry.get("alt_input_files") or [])):
        for k, name in enumerate(names):
            fname = f"{stem}.in{k}{tag}.npy"
            shutil.copyfile(DATA / corpus / name, OUT / fname)
            files.setdefault(tag, []).append(fname)
    return {"path": DATA / corpus / f"{key}.onnx", "inputs": entry["inputs"],
            "outputs": entry["outputs"], "input_files": files[""],
            "alt_input_files": files.get(".alt", []), "source": f"{corpus}/{key}.onnx"}


def _feeds(src: dict, files: list) -> dict:
    """Input name -> array of `files` (paths relative to OUT)."""
    return {n: np.load(OUT / f, allow_pickle=False) for n, f in zip(src["inputs"], files)}


# ----------------------------------------------------------------------------------
# The tools
# ----------------------------------------------------------------------------------

def _optimize(path: Path, model_type: str, heads: int, hidden: int, level: int):
    """optimize_model's OnnxModel (CPU, float32)."""
    from onnxruntime.transformers.optimizer import optimize_model
    return optimize_model(str(path), model_type=model_type, num_heads=heads,
                          hidden_size=hidden, opt_level=level, use_gpu=False)


def _optimize_flavour(path: Path, model_type: str, heads: int, hidden: int, flavour: str):
    """optimize_model as Optimum's higher levels call it: optgelu enables the Gelu
    approximation (O3: FastGelu), optmha the GPU graph (use_gpu, opt_level 0) with
    MultiHeadAttention instead of Attention. Returns (OnnxModel, settings)."""
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model
    options = FusionOptions(model_type)
    if flavour == "optgelu":
        options.enable_gelu_approximation = True
        level, gpu = 1, False
    else:
        options.use_multi_head_attention = True
        level, gpu = 0, True
    m = optimize_model(str(path), model_type=model_type, num_heads=heads, hidden_size=hidden,
                       opt_level=level, use_gpu=gpu, optimization_options=options)
    return m, dict(model_type=model_type, num_heads=heads, hidden_size=hidden,
                   opt_level=level, use_gpu=gpu,
                   enable_gelu_approximation=flavour == "optgelu",
                   use_multi_head_attention=flavour == "optmha")


def _to_fp16(opt_model):
    """A float16 copy (keep_io_types=True) of an optimizer's OnnxModel."""
    from onnxruntime.transformers.onnx_model import OnnxModel
    m = OnnxModel(copy.deepcopy(opt_model.model))
    m.convert_float_to_float16(keep_io_types=True)
    return m.model


def _fp16(src_path: Path, out: Path) -> dict:
    """onnxruntime.transformers.float16's conversion of a plain model (keep_io_types)."""
    from onnxruntime.transformers.float16 import convert_float_to_float16
    model = convert_float_to_float16(onnx.load(str(src_path)), keep_io_types=True)
    onnx.save(model, str(out))
    return dict(keep_io_types=True)


# weight-only quantization (the LLM path): bits, block size, symmetric, accuracy level
# (4 = int8 activations in the kernel), op types (Gather -> GatherBlockQuantized)
WEIGHT_ONLY = {"q4": (4, 16, True, None, ("MatMul",)),
               "q4a4": (4, 16, False, 4, ("MatMul", "Gather")),
               "q8": (8, 32, False, None, ("MatMul",))}


def _weight_only(src_path: Path, out: Path, kind: str) -> dict:
    """MatMulNBitsQuantizer's blockwise weight quantization (MatMulNBits)."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
    bits, block, sym, level, ops = WEIGHT_ONLY[kind]
    quant = MatMulNBitsQuantizer(onnx.load(str(src_path)), bits=bits, block_size=block,
                                 is_symmetric=sym, accuracy_level=level,
                                 op_types_to_quantize=ops)
    quant.process()
    quant.model.save_model_to_file(str(out), False)
    return dict(bits=bits, block_size=block, is_symmetric=sym, accuracy_level=level,
                op_types_to_quantize=list(ops))


def _quantize_qdq_extra(src_path: Path, out: Path, src: dict, kind: str) -> dict:
    """quantize_static flavours: qdq16 (QDQ, 16-bit activations, com.microsoft Q/DQ),
    qdqs8 and qops8 (QDQ / QOperator, symmetric int8 activations, per-channel int8
    weights: onnxruntime's s8s8 kernels)."""
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    reader = type("Reader", (_Calibration, CalibrationDataReader), {})(src)
    if kind == "qdq16":
        act, per_channel, extra = QuantType.QUInt16, False, {"UseQDQContribOps": True}
    else:
        act, per_channel, extra = QuantType.QInt8, True, {"ActivationSymmetric": True}
    fmt = QuantFormat.QOperator if kind == "qops8" else QuantFormat.QDQ
    quantize_static(str(src_path), str(out), reader, quant_format=fmt,
                    activation_type=act, weight_type=QuantType.QInt8,
                    per_channel=per_channel, extra_options=extra)
    return dict(quant_format=fmt.name, activation_type=act.name, weight_type="QInt8",
                per_channel=per_channel, extra_options=extra, calibrate_method="MinMax",
                calibration_sets=len(reader.sets))


class _Calibration:
    """A seeded calibration set: the source's own inputs, and for float inputs three
    more of the same shape drawn from a standard normal (integer inputs, ids and
    masks, are reused as they are)."""

    def __init__(self, src: dict):
        rng = np.random.default_rng(SEED)
        base = _feeds(src, src["input_files"])
        self.sets = [base]
        for _ in range(3):
            self.sets.append({k: (rng.standard_normal(v.shape).astype(v.dtype)
                                  if v.dtype.kind == "f" else v) for k, v in base.items()})
        self.it = iter(self.sets)

    def get_next(self):
        """The next feed dict, None at the end (CalibrationDataReader's protocol)."""
        return next(self.it, None)

    def rewind(self):
        """Start over."""
        self.it = iter(self.sets)


def _quantize_static(src_path: Path, out: Path, src: dict, fmt: str) -> dict:
    """quantize_static in QDQ or QOperator format (qdqpc: QDQ with per-channel
    weights); returns its settings."""
    per_channel = fmt == "qdqpc"
    fmt = "qdq" if per_channel else fmt
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    reader = type("Reader", (_Calibration, CalibrationDataReader), {})(src)
    settings = dict(quant_format="QDQ" if fmt == "qdq" else "QOperator",
                    activation_type="QUInt8", weight_type="QInt8", per_channel=per_channel,
                    calibrate_method="MinMax", calibration_sets=len(reader.sets))
    quantize_static(str(src_path), str(out), reader,
                    quant_format=QuantFormat.QDQ if fmt == "qdq" else QuantFormat.QOperator,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    per_channel=per_channel)
    return settings


def _quantize_dynamic(src_path: Path, out: Path, kind: str) -> dict:
    """quantize_dynamic with QInt8 weights (s8) or QUInt8 per-channel (u8pc)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    per_channel = kind == "u8pc"
    wtype = QuantType.QUInt8 if kind == "u8pc" else QuantType.QInt8
    # the optimizer's contrib ops leave some tensors untyped for onnx's shape
    # inference; Optimum's quantizer then needs the type named (float32)
    extra = {"DefaultTensorType": onnx.TensorProto.FLOAT}
    quantize_dynamic(str(src_path), str(out), weight_type=wtype, per_channel=per_channel,
                     extra_options=extra)
    return dict(weight_type=wtype.name, per_channel=per_channel,
                extra_options={"DefaultTensorType": "FLOAT"})


def _ort_offline(src_path: Path, out: Path, level: str) -> dict:
    """onnxruntime's graph optimizations of the model saved at `out`."""
    so = ort.SessionOptions()
    so.graph_optimization_level = {
        "ext": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}[level]
    so.optimized_model_filepath = str(out)
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    ort.InferenceSession(str(src_path), so, providers=["CPUExecutionProvider"])
    return dict(graph_optimization_level=so.graph_optimization_level.name,
                intra_op_num_threads=1)


def _contrib_counts(model: onnx.ModelProto) -> dict:
    """domain::op -> count of the non-standard nodes (fusions, quantized ops)."""
    c = collections.Counter(f"{n.domain}::{n.op_type}" for n in model.graph.node
                            if n.domain in CONTRIB)
    return dict(sorted(c.items()))


def _all_counts(model: onnx.ModelProto) -> dict:
    """(domain or ai.onnx)::op -> count of every node."""
    c = collections.Counter(f"{n.domain or 'ai.onnx'}::{n.op_type}" for n in model.graph.node)
    return dict(sorted(c.items()))


def _ort_runs(path: Path, src: dict) -> None:
    """Raise when onnxruntime refuses or fails to run the saved model on the inputs."""
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for files in [src["input_files"]] + ([src["alt_input_files"]]
                                         if src["alt_input_files"] else []):
        sess.run(src["outputs"], _feeds(src, files))


# ----------------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------------

def _process(key, corpus, model_type, heads, hidden, variants, work, index, failures):
    """Write every variant of one source."""
    # the timm and hf corpora share names (vit, swin, ...): timm's get a prefix
    stem = f"timm_{key}" if corpus == "timm_exported" else key
    src = (_export_eager(key, work) if corpus == "here"
           else _corpus_source(key, corpus, stem))
    made = {}  # variant -> path (later variants build on earlier ones)

    def record(variant, path, tool, settings, model=None, keep=True):
        model = model if model is not None else onnx.load(str(path))
        if not keep:  # only a base of later variants (size)
            made[variant] = path
            return
        target = OUT / f"{stem}__{variant}.onnx"
        onnx.save(model, str(target))
        try:
            _ort_runs(target, src)
        except Exception as e:  # noqa: BLE001 - onnxruntime refusing is a result
            failures.append(dict(source=stem, variant=variant, tool=tool,
                                 stage="onnxruntime session", error=str(e)[:300]))
            target.unlink()
            return
        made[variant] = target
        index[target.name] = dict(
            source=src["source"], variant=variant, tool=tool, settings=settings,
            inputs=src["inputs"], input_files=src["input_files"],
            alt_input_files=src["alt_input_files"], outputs=src["outputs"],
            float16="fp16" in variant, quantized=variant.startswith(("q", "opt_q", "~q")),
            contrib_ops=_contrib_counts(model), ops=_all_counts(model))

    def attempt(variant, tool, fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - the tool crashing is a result
            failures.append(dict(source=stem, variant=variant, tool=tool,
                                 stage="tool", error=f"{type(e).__name__}: {str(e)[:300]}"))

    if "opt" in variants or "optnf" in variants:
        kept = {}
        for level in (1, 99):
            def run(level=level):
                m = _optimize(src["path"], model_type, heads, hidden, level)
                counts = _all_counts(m.model)
                if level == 99 and counts == kept.get(1):
                    return  # the same graph as at level 1
                kept[level] = counts
                settings = dict(model_type=model_type, num_heads=heads,
                                hidden_size=hidden, opt_level=level, use_gpu=False)
                fused = {k: v for k, v in m.get_fused_operator_statistics().items() if v}
                tool = "onnxruntime.transformers.optimizer.optimize_model"
                record(f"opt{level}", None, tool, dict(settings, fused=fused),
                       model=m.model)
                if level == 99 or "optnf" in variants:
                    return  # float16 of opt1 only: NCHWc Convs of 99 refuse float16
                fp16 = _to_fp16(m)
                record(f"opt{level}_fp16", None, tool + " + convert_float_to_float16",
                       dict(settings, keep_io_types=True), model=fp16)
            attempt(f"opt{level}", "optimize_model", run)
    for flavour in ("optmha", "optgelu"):
        if flavour not in variants:
            continue

        def run_flavour(flavour=flavour):
            m, settings = _optimize_flavour(src["path"], model_type, heads, hidden, flavour)
            tool = "onnxruntime.transformers.optimizer.optimize_model"
            fused = {k: v for k, v in m.get_fused_operator_statistics().items() if v}
            record(flavour, None, tool, dict(settings, fused=fused), model=m.model)
            if flavour == "optmha":  # Optimum's O4: the GPU graph in float16
                record(f"{flavour}_fp16", None, tool + " + convert_float_to_float16",
                       dict(settings, keep_io_types=True), model=_to_fp16(m))
        attempt(flavour, "optimize_model", run_flavour)
    for variant in variants:
        if variant in ("opt", "optnf", "optmha", "optgelu"):
            continue
        # "<base>_ortall" / "opt_<step>" apply the step to the variant `base` ("opt" =
        # opt1), a bare step to the source model; "~" marks a base that is not kept
        keep = not variant.startswith("~")
        variant = variant.lstrip("~")
        if variant.endswith(("_ortall", "_ortext")):
            base, step = variant[:-7], variant[-6:]
        elif variant.startswith(("opt_", "opt1_fp16_")):
            base = "opt1_fp16" if variant.startswith("opt1_fp16_") else "opt"
            step = variant[len(base) + 1:]
        else:
            base, step = "", variant
        base_path = made.get({"opt": "opt1"}.get(base, base)) if base else src["path"]
        if base_path is None:
            failures.append(dict(source=stem, variant=variant, stage="missing base"))
            continue
        tmp = work / f"{stem}__{variant}.tmp.onnx"

        def run(step=step, base_path=base_path, tmp=tmp, variant=variant):
            if step in ("qdyn_s8", "qdyn_u8pc"):
                settings = _quantize_dynamic(base_path, tmp, step[5:])
                tool = "onnxruntime.quantization.quantize_dynamic"
            elif step == "fp16":
                settings = _fp16(base_path, tmp)
                tool = "onnxruntime.transformers.float16.convert_float_to_float16"
            elif step in WEIGHT_ONLY:
                settings = _weight_only(base_path, tmp, step)
                tool = "onnxruntime.quantization.matmul_nbits_quantizer.MatMulNBitsQuantizer"
            elif step in ("qdq16", "qdqs8", "qops8"):
                settings = _quantize_qdq_extra(base_path, tmp, src, step)
                tool = "onnxruntime.quantization.quantize_static"
            elif step in ("qdq", "qop", "qdqpc"):
                settings = _quantize_static(base_path, tmp, src, step)
                tool = "onnxruntime.quantization.quantize_static"
            else:
                settings = _ort_offline(base_path, tmp, step[3:])
                tool = "onnxruntime.SessionOptions.optimized_model_filepath"
            if base_path != src["path"]:
                settings = dict(settings, applied_to=base_path.name)
            record(variant, tmp, tool, settings, keep=keep)
        attempt(variant, step, run)


def main():
    """Regenerate OUT (its .onnx files, the eager sources' inputs and index.json)."""
    _quiet()
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    index, failures = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for spec in HF + TIMM:
            print("processing", spec[0], spec[1], flush=True)
            _process(*spec, work, index, failures)
    meta = dict(onnxruntime=ort.__version__, onnx=onnx.__version__, seed=SEED,
                failures=failures)
    with open(OUT / "index.json", "w", encoding="utf-8") as f:
        json.dump(dict(sorted(index.items())), f, indent=1, sort_keys=True)
        f.write("\n")
    with open(OUT / "manifest.json", "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    size = sum(p.stat().st_size for p in OUT.iterdir())
    print(f"{len(index)} models, {size / 1e6:.2f} MB, {len(failures)} failures")
    for fail in failures:
        print("  failed:", fail)


if __name__ == "__main__":
    main()

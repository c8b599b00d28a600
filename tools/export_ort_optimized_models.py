"""Regenerate the optimized corpus models of tests/ops/test_ms_transformer.py.

Runs onnxruntime's transformers optimizer (`optimize_model`, the one HF Optimum calls)
on PyTorch-exported models of tests/convert/data/pytorch_exported/ and saves each
result here as <name>.opt.onnx, with the fused op counts in fused_ops.json. None of
those fuses Attention, EmbedLayerNormalization or FastGelu (their attention is not
written the way the fusions look for), so a 2-layer BERT in Hugging Face's export
patterns is built here too (bert_synthetic.onnx) and optimized the same way. Needs
sympy (the optimizer's symbolic shape inference). Run from the repo root:

    .venv/bin/python tools/export_ort_optimized_models.py
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh
from onnxruntime.transformers.optimizer import optimize_model

REPO = Path(__file__).resolve().parents[1]
HERE = REPO / "tests" / "ops" / "data" / "ms_transformer"   # where the results go
CORPUS = REPO / "tests" / "convert" / "data" / "pytorch_exported"
# (model, optimizer model_type, num_heads, hidden_size): sizes from
# tools/export_torch_models.py (BertTiny, GPTBlockTiny, GPTSdpaTiny: d=16, heads=2)
MODELS = (("bert__ts_op17", "bert", 2, 16),
          ("gpt__dynamo_op23_dyn", "gpt2", 2, 16),
          ("gpt_sdpa__ts_op17_dyn", "gpt2", 2, 16))




def build_bert(seed=0, vocab=50, maxpos=32, d=16, heads=2, ff=32, layers=2):
    """A 2-layer BERT encoder written as Hugging Face's BERT exports it (word +
    sliced-position + segment Gathers, LayerNormalization, Q/K/V MatMul+Add, Reshape,
    Transpose, Div by sqrt(head_size), the (1 - mask) * -10000 additive mask, Softmax,
    residual Adds; one Gelu spelled with Erf, one tanh Gelu spelled with Pow), in the
    patterns onnxruntime's BERT fusions match. Random weights (seeded); inputs
    input_ids, token_type_ids, attention_mask (batch, seq) int64."""
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    count = [0]

    def fresh(prefix):
        count[0] += 1
        return f"{prefix}{count[0]}"

    def weight(*shape, scale=0.2):
        name = fresh("w")
        value = (rng.standard_normal(shape) * scale).astype(np.float32)
        inits.append(nh.from_array(value, name))
        return name

    def const(value, dtype=np.float32):
        name = fresh("c")
        inits.append(nh.from_array(np.asarray(value, dtype), name))
        return name

    def node(op, ins, **attrs):
        out = fresh("t")
        nodes.append(h.make_node(op, ins, [out], name=f"{op}_{out}", **attrs))
        return out

    def ints(*values):
        return const(list(values), np.int64)

    def layer_norm(x):
        gamma = const(1 + 0.1 * rng.standard_normal(d))
        beta = const(0.1 * rng.standard_normal(d))
        return node("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=1e-12)

    def dense(x, n_in, n_out):
        y = node("MatMul", [x, weight(n_in, n_out)])
        return node("Add", [y, const(0.1 * rng.standard_normal(n_out))])

    # embeddings: word + segment, + position ids sliced to the run-time length
    word = node("Gather", [weight(vocab, d, scale=1.0), "input_ids"])
    seq = node("Gather", [node("Shape", ["input_ids"]), const(1, np.int64)])
    ends = node("Unsqueeze", [seq, ints(0)])
    pos_ids = node("Slice", [const(np.arange(maxpos)[None], np.int64), ints(0), ends,
                             ints(1), ints(1)])
    pos = node("Gather", [weight(maxpos, d, scale=1.0), pos_ids])
    segment = node("Gather", [weight(2, d, scale=1.0), "token_type_ids"])
    x = layer_norm(node("Add", [node("Add", [word, segment]), pos]))
    # the extended attention mask (1 - mask) * -10000 of shape (batch, 1, 1, seq)
    mask = node("Unsqueeze", [node("Unsqueeze", ["attention_mask", ints(1)]), ints(2)])
    mask = node("Cast", [mask], to=TP.FLOAT)
    mask_add = node("Mul", [node("Sub", [const(1.0), mask]), const(-10000.0)])
    hd = d // heads
    for layer in range(layers):
        def heads_of(perm):
            split = node("Reshape", [dense(x, d, d), ints(0, 0, heads, hd)])
            return node("Transpose", [split], perm=perm)
        q, k, v = heads_of([0, 2, 1, 3]), heads_of([0, 2, 3, 1]), heads_of([0, 2, 1, 3])
        scores = node("Div", [node("MatMul", [q, k]), const(np.sqrt(hd))])
        probs = node("Softmax", [node("Add", [scores, mask_add])], axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, ints(0, 0, d)])
        x = layer_norm(node("Add", [dense(ctx, d, d), x]))
        f = dense(x, d, ff)
        if layer % 2 == 0:  # exact Gelu: x * (1 + erf(x / sqrt 2)) * 0.5
            erf = node("Erf", [node("Div", [f, const(1.4142135381698608)])])
            act = node("Mul", [node("Mul", [f, node("Add", [erf, const(1.0)])]), const(0.5)])
        else:  # tanh Gelu: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
            cube = node("Mul", [node("Pow", [f, const(3.0)]), const(0.044715)])
            inner = node("Mul", [node("Add", [f, cube]), const(0.7978845834732056)])
            one_plus = node("Add", [node("Tanh", [inner]), const(1.0)])
            act = node("Mul", [node("Mul", [const(0.5), f]), one_plus])
        x = layer_norm(node("Add", [dense(act, ff, d), x]))
    nodes.append(h.make_node("Identity", [x], ["last_hidden_state"]))
    ins = [h.make_tensor_value_info(n, TP.INT64, ["batch", "seq"])
           for n in ("input_ids", "token_type_ids", "attention_mask")]
    outs = [h.make_tensor_value_info("last_hidden_state", TP.FLOAT, ["batch", "seq", d])]
    graph = h.make_graph(nodes, "bert_synthetic", ins, outs, inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def main():
    fused = {}
    onnx.save(build_bert(), str(HERE / "bert_synthetic.onnx"))
    for name, model_type, heads, hidden in MODELS + (("bert_synthetic", "bert", 2, 16),):
        source = HERE if name == "bert_synthetic" else CORPUS
        opt = optimize_model(str(source / f"{name}.onnx"), model_type=model_type,
                             num_heads=heads, hidden_size=hidden, opt_level=0)
        model = opt.model
        counts = collections.Counter(
            f"{n.domain or 'ai.onnx'}::{n.op_type}" for n in model.graph.node)
        fused[name] = {"model_type": model_type, "num_heads": heads,
                       "hidden_size": hidden,
                       "fused": {k: v for k, v in opt.get_fused_operator_statistics().items()
                                 if v},
                       "ops": dict(sorted(counts.items()))}
        onnx.save(model, str(HERE / f"{name}.opt.onnx"))
    (HERE / "fused_ops.json").write_text(json.dumps(fused, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()

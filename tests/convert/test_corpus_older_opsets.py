"""Real exported models written at older opsets (`to_onnx(model, opset=N)`).

The corpora of PyTorch, Hugging Face, timm, torchvision, tf2onnx and paddle2onnx
exports (see their tests) are written at opsets 17 and 13 where older than their own;
each export must pass ONNX's full check and give, in onnxruntime, the original model's
outputs, or be refused with a ConversionError that names the node and what the target
lacks (REFUSED lists the refusals these models meet). Models onnxruntime cannot run
(bfloat16) are skipped.
"""

import numpy as np
import onnx
import pytest

from .corpus import (assert_same_array, corpus_folder, export_at_older_opset, feed_sets,
                     load_index, model_file, ort_outputs)

CORPORA = ("pytorch_exported", "hf_exported", "timm_exported", "tf2onnx_exported",
           "torchvision_exported", "paddle_exported")
TARGETS = (13, 17)
TOL, HALF_TOL = 1e-4, 5e-3

# what the target lacks, in the refusals these models meet
REFUSED = (r"its attribute 'allowzero' came in at opset 14",  # a shape computed at run time
           r"its mode 'wrap' came in at opset 19",
           r"its attribute '(reduction|antialias)' came in at opset 1[68]",
           r"the op came in at opset \d+",                     # DFT, Col2Im, GridSample
           r"it changed at opset 20 in a way this node uses",  # GridSample's modes
           r"is bfloat16, which \w+ accepts from opset \d+",
           r"its axes are computed at run time",
           r"coordinate_transformation_mode 'half_pixel' came in at opset 16")  # aligned


def _index(corpus) -> dict:
    """file -> entry (tf2onnx's index lists its models under "models")."""
    index = load_index(corpus_folder(corpus))
    return index["models"] if corpus == "tf2onnx_exported" else index


def _cases():
    out = []
    for corpus in CORPORA:
        for name, entry in sorted(_index(corpus).items()):
            if not name.endswith(".onnx") or "outputs" not in entry:
                continue
            source = entry.get("opset")
            for target in TARGETS:
                if source is None or target < source:
                    out.append(pytest.param(corpus, name, target,
                                            id=f"{corpus}/{name}-opset{target}"))
    return out


@pytest.mark.parametrize("corpus,name,target", _cases())
def test_written_at_an_older_opset(corpus, name, target):
    folder = corpus_folder(corpus)
    entry = _index(corpus)[name]
    path, original = model_file(folder, name)
    source = [o.version for o in onnx.load_from_string(original).opset_import
              if o.domain in ("", "ai.onnx")][0]
    if target >= source:
        pytest.skip(f"the model is at opset {source}")
    proto = export_at_older_opset(path, target, REFUSED)
    if proto is None:
        return
    outputs = entry["outputs"]
    feeds = feed_sets(folder, entry)[0]
    try:
        want = ort_outputs(original, feeds, outputs)
    except Exception as e:  # noqa: BLE001 - onnxruntime's own error classes
        if type(e).__module__.startswith("onnxruntime"):
            pytest.skip(f"onnxruntime cannot run the original: {str(e).splitlines()[0]}")
        raise
    got = ort_outputs(proto.SerializeToString(), feeds, outputs)
    half = any(v.dtype == np.float16 for v in feeds.values())
    for out, g, w in zip(outputs, got, want):
        tol = HALF_TOL if half or np.asarray(w).dtype == np.float16 else TOL
        assert_same_array(g, w, f"{name} at opset {target}, output {out!r}", tol, tol)



def test_the_corpora_take_every_rewrite():
    """The models that go down hold what the downgrade rewrites: dynamo's Reshape with
    allowzero, TorchScript's inference BatchNormalization, LayerNormalization and Gelu,
    reductions with axes inputs, Shape with start or end."""
    ops = set()
    for corpus in CORPORA:
        for name, entry in _index(corpus).items():
            if name.endswith(".onnx") and entry.get("opset", 0) > 13:
                graph = onnx.load(f"{corpus_folder(corpus)}/{name}").graph
                for n in graph.node:
                    attrs = {a.name for a in n.attribute}
                    ops.add(n.op_type + ("+" + "+".join(sorted(attrs & {"allowzero", "start",
                                                                        "end"}))
                                         if attrs & {"allowzero", "start", "end"} else ""))
                    if n.op_type.startswith("Reduce") and len(n.input) > 1 and n.input[1]:
                        ops.add(n.op_type + "+axes")
    assert {"Reshape+allowzero", "BatchNormalization", "LayerNormalization", "Gelu",
            "ReduceMean+axes"} <= ops
    assert any(op.startswith("Shape+") for op in ops)

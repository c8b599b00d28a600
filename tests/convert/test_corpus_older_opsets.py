"""Real exported models written at older opsets (`to_onnx(model, opset=N)`).

The corpora of PyTorch, Hugging Face, timm, torchvision, tf2onnx and paddle2onnx
exports (see their tests) are written at opsets 17 and 13 where older than their own;
each export must pass ONNX's full check and give, in onnxruntime, the original model's
outputs, or be refused with a ConversionError that names the node and what the target
lacks (REFUSED lists the refusals these models meet). Models onnxruntime cannot run
(bfloat16) are skipped. The same holds at opsets 12 to 9 (`make test-slow`; a sample of
each corpus runs by default, see DEFAULT_OLDER).
"""

import numpy as np
import onnx
import pytest

from .corpus import (assert_same_array, corpus_folder, export_at_older_opset, feed_sets,
                     load_index, model_file, ort_outputs)

CORPORA = ("pytorch_exported", "hf_exported", "timm_exported", "tf2onnx_exported",
           "torchvision_exported", "paddle_exported")
TARGETS = (13, 17)
# Opsets 12 to 9: every model at each of them runs with `make test-slow` (about 4 minutes
# more on 2 workers); the default run takes a sample: a few models of each corpus at 11
# and 9, and the exports that once broke the contract (below).
OLDER_TARGETS = (12, 11, 10, 9)
DEFAULT_OLDER = {
    "pytorch_exported": {"bert__ts_op17.onnx": (11, 9), "gru__dynamo_op23.onnx": (11, 9),
                         # Clip's constant bounds (ReLU6) as Clip-6's attributes
                         "mobilenetv2__ts_op17_dyn.onnx": (10,),
                         # a Slice's negative axes at 10: the refusal did not say the target
                         "gpt_sdpa__ts_op17_dyn.onnx": (10,)},
    "hf_exported": {"distilbert_init_inputs__ts_op17.onnx": (11, 9),
                    # dynamo's Gemm without C (optional from 11) at 10 and 9: the export
                    # failed ONNX's checker
                    "convnext__dynamo_op23.onnx": (11, 10, 9)},
    "timm_exported": {"mobileone__ts_op20.onnx": (11, 9), "convmixer__dynamo_op18.onnx": (11, 9),
                      "gmlp__ts_op17.onnx": (10,)},
    "tf2onnx_exported": {"control_flow__tf2onnx_op13.onnx": (11, 9),
                         "lstm__tf2onnx_op13.onnx": (11, 9), "gru__tf2onnx_op13.onnx": (11,),
                         # Pad's constant pads as Pad-2's attribute
                         "conv1d__tf2onnx_op13.onnx": (10,)},
    "torchvision_exported": {"ops_regularizers__ts_op17.onnx": (11, 9),
                             "vit__dynamo_op18.onnx": (11, 10, 9)},
    "paddle_exported": {"prelu__p2o_op13_dyn.onnx": (11, 9),
                        "pools_2d__p2o_op17_dyn.onnx": (11, 9)},
}
TOL, HALF_TOL = 1e-4, 5e-3

# what the target lacks, in the refusals these models meet
REFUSED = (r"its attribute 'allowzero' came in at opset 14",  # a shape computed at run time
           r"its mode 'wrap' came in at opset 19",
           r"its attribute '(reduction|antialias)' came in at opset 1[68]",
           r"the op came in at opset \d+",                     # DFT, Col2Im, GridSample
           r"it changed at opset 20 in a way this node uses",  # GridSample's modes
           r"is \w+, which \w+ accepts from opset \d+",   # bfloat16 Add, float Equal
           # an input that is an attribute at the target (axes below 13 or 18, Clip's
           # bounds, Pad's pads and value below 11, Slice's starts and ends below 10)
           r"its \w+ (is|are) computed at run time",
           r"its steps \[[-\d, ]+\] are not all 1, and before opset 10",
           r"its input is \w+, and before opset 1[12] (Clip|Pad) takes float",
           r"coordinate_transformation_mode 'half_pixel' came in at opset 16",  # aligned
           # Resize below 11: 'asymmetric' with constant scales only
           r"its (mode|coordinate_transformation_mode|nearest_mode) '\w+' came in at opset 11",
           r"its output size is not given as constant scales",
           r"its scales \[[-\d., ]+\] (shrink|are not whole numbers)",
           # at opsets 12-9: what the older op has no slot for (MaxPool's dilations and
           # ceil_mode at 10, Resize's modes and Pad's constant value at 11, Slice's
           # steps at 10, Shape's end at 15, Gather's batch_dims, Constant's value_ints)
           r"its attribute '(dilations|ceil_mode|(coordinate_transformation|nearest)?_?mode"
           r"|end|start|batch_dims|value_ints|largest)' came in at opset 1[0-6]",
           r"its input \d+ \('[^']*'\) came in at opset 1[01]",
           # an op whose form changed (Clip's and Pad's inputs at 11, Split's at 13 and
           # 18, ...) where onnx's converter has no adapter; Unsqueeze inside an If or Loop
           r"it changed at opset \d+ in a way this node uses",
           r"before opset 13 the op normalizes over every axis",   # Softmax of unknown rank
           r"its input's type is bfloat16, and the rewrite into older ops needs",
           r"its axes (\[[-\d, ]+\] )?are negative, which only opset 11")  # unknown rank


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
            sample = DEFAULT_OLDER[corpus].get(name, ())
            for target in TARGETS + OLDER_TARGETS:
                if source is None or target < source:
                    slow = target in OLDER_TARGETS and target not in sample
                    out.append(pytest.param(corpus, name, target,
                                            id=f"{corpus}/{name}-opset{target}",
                                            marks=[pytest.mark.slow] if slow else []))
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


def test_a_refusal_names_the_change_the_node_uses():
    """Where a node uses a change that its older op has no slot for, the refusal names
    that change (Slice-10's steps at 9), not the newest version's (13)."""
    from onegraph.convert import from_onnx, to_onnx
    from onegraph.errors import ConversionError

    path = f"{corpus_folder('pytorch_exported')}/gpt_sdpa__ts_op17_dyn.onnx"
    with pytest.raises(ConversionError, match=r"cannot write Slice .* at opset 9 \(it "
                                              r"changed at opset 10 in a way the node uses"):
        to_onnx(from_onnx(path), opset=9)

"""timm (PyTorch Image Models) architectures as PyTorch's exporters really write them,
against onnxruntime.

data/timm_exported/ holds tiny versions of timm's own model classes (ResNet variants,
RegNet, EfficientNet, MobileNets, GhostNet, DenseNet, DLA, CSPNet, ConvNeXt, MLP-Mixer,
ViT, DeiT, BEiT, Swin, MaxViT, LeViT, PVTv2, FastViT, RepVGG/MobileOne before and after
reparameterisation, VOLO, CaiT, XCiT, Sequencer and more; random weights, a few
channels, 32x32 or 64x64 images) written by torch 2.14's TorchScript exporter (opsets 17
and 20) and dynamo exporter (opsets 18 and 23), some with a dynamic batch axis (a few
with dynamic height and width too), a few in float16, one with its initializers listed
as graph inputs, one from the dynamo exporter without its optimiser, with seeded inputs
(index.json says which file feeds which input; *.alt.npy are a second batch or image
size). `tools/export_timm_models.py` wrote them. Each must import, run in the
Session as onnxruntime runs it, at both sizes when dynamic, and come back from to_onnx
to give onnxruntime the same outputs.
"""

import os

import numpy as np
import onnx
import pytest

import onegraph as og
from onegraph.convert import from_onnx, to_onnx

from .corpus import (assert_same_array, corpus_folder, feed_sets, load_index, model_file,
                     ort_outputs, strict_xfail_params)

DATA = corpus_folder("timm_exported")
INDEX = load_index(DATA)

TOL = 1e-4  # rtol and atol

# model file -> reason, for models onegraph gets wrong today (each one a finding)
XFAILS: dict = {}

# float16 models: onnxruntime computes some float16 kernels in float32 and rounds once,
# onegraph rounds after each step; outputs near 1 differ by up to 2 ulps (2e-3)
FLOAT16_TOL = 5e-3


@pytest.mark.parametrize("name", strict_xfail_params(INDEX, XFAILS))
def test_runs_as_onnxruntime_does_and_round_trips(name):
    entry = INDEX[name]
    path, original = model_file(DATA, name)
    outputs = entry["outputs"]
    model = from_onnx(path)
    session = og.Session(model)
    exported = to_onnx(model)
    onnx.checker.check_model(exported, full_check=True)
    for k, feeds in enumerate(feed_sets(DATA, entry)):
        half = any(v.dtype == np.float16 for v in feeds.values())
        rtol = atol = FLOAT16_TOL if half else TOL
        want = ort_outputs(original, feeds, outputs)
        got = session.run(outputs, feeds)
        back = ort_outputs(exported.SerializeToString(), feeds, outputs)
        for out, g, b, w in zip(outputs, got, back, want):
            assert_same_array(g, w, f"{name} size {k} output {out!r}", rtol, atol)
            assert_same_array(b, w, f"{name} size {k} output {out!r} after to_onnx",
                              rtol, atol)


def test_the_corpus_covers_both_exporters_and_dynamic_axes():
    exporters = {e["exporter"] for e in INDEX.values()}
    assert exporters == {"ts", "dynamo"}
    assert sum(bool(e.get("alt_input_files")) for e in INDEX.values()) >= 6
    assert {e["opset"] for e in INDEX.values()} >= {17, 18, 20, 23}
    assert len({e["family"] for e in INDEX.values()}) >= 20
    assert any(e["dynamic"] == "hw" for e in INDEX.values())  # run-time image sizes
    assert any(np.load(os.path.join(DATA, e["input_files"][0]),
                       allow_pickle=False).dtype == np.float16
               for e in INDEX.values())

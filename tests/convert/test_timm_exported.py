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
import pytest

from .corpus import check_runs_as_onnxruntime, corpus_folder, load_index, strict_xfail_params

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
    check_runs_as_onnxruntime(DATA, name, TOL, FLOAT16_TOL)


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

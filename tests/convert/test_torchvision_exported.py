"""torchvision architectures as PyTorch's exporters really write them, against
onnxruntime and against eager PyTorch.

data/torchvision_exported/ holds tiny versions of torchvision's own model classes
(random seeded weights, randomised BatchNorm statistics, a few channels, small images):
detection (Faster R-CNN, Mask R-CNN, Keypoint R-CNN, RetinaNet, FCOS, SSD, SSDlite on
tiny backbones and FPNs, score threshold 0 so that random weights still detect; one
SSDlite with a 0.99 threshold that detects nothing), segmentation (FCN, DeepLabV3's
ASPP, LRASPP), classification (GoogLeNet's Inception blocks, MNASNet, ShuffleNetV2,
SqueezeNet's Fire blocks, RegNet, EfficientNetV2, DenseNet, Swin V2, MaxViT, ViT,
ConvNeXt), video (R3D, R(2+1)D, S3D's blocks, MViT V2),
optical flow (RAFT-small's layout built tiny, two flow updates) and torchvision.ops
(nms, batched_nms, roi_align aligned and not with several sampling ratios, roi_pool,
box_iou and other box ops, MultiScaleRoIAlign, FeaturePyramidNetwork, StochasticDepth
and DropBlock in eval, deform_conv2d by the dynamo exporter), written
by torch 2.14's TorchScript exporter (`dynamo=False`, opsets 11, 16, 17) and dynamo
exporter (opsets 18 and 23), some with a dynamic batch axis, some with dynamic height
and width (the detection models take one image of any size). Next to each model are its
seeded inputs (*.in<k>.npy; *.alt.npy are the second batch or image size of dynamic
models) and eager PyTorch's outputs on them (*.out<k>.npy). index.json says which file
feeds which input, and under "refused" lists the exports that the exporter refused or
that onnxruntime could not run or got wrong (they are not in the corpus: e.g.
ps_roi_align and ps_roi_pool, which neither exporter can write, RoiAlign-22 from the
dynamo exporter at opset 23, which onnxruntime has no kernel for, and MViT from the
TorchScript exporter, which onnxruntime cannot run). The generator's `--sweep` exports
every model at every exporter, opset and dynamic-axes variant, beyond this corpus.
`tools/export_torchvision_models.py` wrote them.

Each model must import, run in the Session as onnxruntime runs it, at both sizes when
dynamic, and come back from to_onnx to give onnxruntime the same outputs; the Session's
outputs must also match eager PyTorch's (the Faster R-CNN written at opset 11 holds
RoiAlign-10, which samples without RoiAlign-16's default half-pixel shift).
"""

import os

import numpy as np
import pytest

from .corpus import (assert_same_array, check_runs_as_onnxruntime, corpus_folder,
                     feed_sets, load_array, load_index, strict_xfail_params)

DATA = corpus_folder("torchvision_exported")
INDEX = load_index(DATA)
# the model entries (index.json also holds "refused" and "generator")
MODELS = {k: v for k, v in INDEX.items() if k.endswith(".onnx")}

TOL = 1e-4  # rtol and atol, against onnxruntime and against eager PyTorch

# model file -> reason, for models onegraph gets wrong today (each one a finding)
XFAILS: dict = {}

# model file -> reason, for the comparison with eager PyTorch only
XFAILS_EAGER: dict = {}


@pytest.mark.parametrize("name", strict_xfail_params(MODELS, XFAILS))
def test_runs_as_onnxruntime_does_and_round_trips(name):
    check_runs_as_onnxruntime(DATA, name, TOL)


EAGER = [f for f, e in MODELS.items() if e.get("output_files")]


@pytest.mark.parametrize("name", strict_xfail_params(EAGER, {**XFAILS, **XFAILS_EAGER}))
def test_session_matches_eager_pytorch(name):
    import onegraph as og
    from onegraph.convert import from_onnx

    entry = MODELS[name]
    session = og.Session(from_onnx(os.path.join(DATA, name)))
    wants = [entry["output_files"]] + ([entry["alt_output_files"]]
                                       if entry.get("alt_output_files") else [])
    for k, (feeds, files) in enumerate(zip(feed_sets(DATA, entry), wants)):
        got = session.run(entry["outputs"], feeds)
        for out, g, f in zip(entry["outputs"], got, files):
            assert_same_array(g, load_array(DATA, f), f"{name} size {k} output {out!r} "
                              "vs eager PyTorch", TOL, TOL)


def test_the_corpus_covers_what_the_docstring_promises():
    assert {e["exporter"] for e in MODELS.values()} == {"ts", "dynamo"}
    assert {e["opset"] for e in MODELS.values()} >= {11, 16, 17, 18, 23}
    kinds = {e["dynamic"] for e in MODELS.values()}
    assert {"batch", "hw"} <= kinds
    for e in MODELS.values():  # dynamic models have a second size, static ones not
        assert bool(e.get("alt_input_files")) == bool(e["dynamic"])
    families = {e["family"] for e in MODELS.values()}
    assert len(families) >= 25
    assert {"fasterrcnn", "maskrcnn", "keypointrcnn", "retinanet", "fcos", "ssd",
            "ssdlite", "fcn", "deeplabv3", "lraspp", "raft", "ops"} <= families
    dets = {f: e for f, e in MODELS.items() if e.get("detections")}
    # detection models that do detect something, at every size, and one that does not
    assert len({e["family"] for e in dets.values() if min(e["detections"]) > 0}) >= 7
    assert any(max(e["detections"]) == 0 for e in dets.values())
    for f, e in dets.items():  # the saved eager boxes agree with the recorded count
        boxes = np.load(os.path.join(DATA, e["output_files"][0]), allow_pickle=False)
        assert boxes.shape == (e["detections"][0], 4), f
    assert INDEX["refused"], "what the exporters refused is recorded"
    # a note says whose fault a refusal is where the exporter did write a file
    assert INDEX["notes"] and set(INDEX["notes"]) <= set(INDEX["refused"])
    total = sum(os.path.getsize(os.path.join(DATA, f)) for f in os.listdir(DATA))
    assert total < 5_000_000

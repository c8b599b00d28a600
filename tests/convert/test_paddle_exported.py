"""PaddlePaddle models as paddle2onnx really writes them, against onnxruntime and
against Paddle's own outputs.

data/paddle_exported/ holds small PaddlePaddle models with random seeded weights
(randomised BatchNorm statistics, eval mode): paddle.vision.models classes at small
scales (LeNet, MobileNetV1/V2/V3, ShuffleNetV2) and shrunken ResNet (BasicBlock and
BottleneckBlock), SqueezeNet, DenseNet, GoogLeNet, InceptionV3, VGG and AlexNet built
from paddle's own blocks; nn.LSTM and nn.GRU (bidirectional, stacked, time-major,
started from given states); TransformerEncoder / Decoder and MultiHeadAttention; and
groups of layers and ops side by side (the norms; Conv1D/2D/3D and their transposes
with groups, dilation and padding modes; interpolate's modes by size; pooling and
adaptive pooling; gather / scatter, sorting, shape, pad, activation, reduction,
matmul, logic and run-time-shape ops; yolo_box, roi_align and multiclass_nms3).
paddle2onnx 2.1 (PaddlePaddle 3.3.1, through `paddle.onnx.export` and its default
Polygraphy constant folding) wrote them at opsets 11, 13, 16, 17 and 21 (the newest it
supports; it raised a few of the 17s to 18 or 19 itself), 30 of them with a dynamic
batch (InputSpec None), with seeded inputs and Paddle's dygraph outputs on them
(*.alt.npy: inputs of a second batch size). `tools/export_paddle_models.py` wrote them;
it kept only exports that onnxruntime runs to Paddle's outputs. refused.json lists the
rest: the models and op-group pieces paddle2onnx refused, wrote as invalid models, or
wrote wrong (a group whose piece was refused holds its other pieces).

Each model must import, run in the Session as onnxruntime runs it, at both batch sizes
when dynamic, come back from to_onnx as a model that passes the full ONNX checker and
gives onnxruntime the same outputs, and give Paddle's own outputs.
"""

import json
import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onegraph as og  # noqa: E402
from onegraph.convert import from_onnx  # noqa: E402

from .corpus import (assert_same_array, check_runs_as_onnxruntime,  # noqa: E402
                     corpus_folder, feed_sets, load_array, load_index, strict_xfail_params)

DATA = corpus_folder("paddle_exported")
INDEX = load_index(DATA)
with open(os.path.join(DATA, "refused.json"), encoding="utf-8") as _f:
    REFUSED = json.load(_f)

TOL = 1e-4  # rtol and atol, against onnxruntime and against Paddle

# model file -> reason, for models onegraph gets wrong today (each one a finding)
# none now: roi_one_image at opset 13 (RoiAlign-10 run with half_pixel) was fixed in
# 77d9759
XFAILS: dict = {}


@pytest.mark.parametrize("name", strict_xfail_params(INDEX, XFAILS))
def test_runs_as_onnxruntime_does_and_round_trips(name):
    check_runs_as_onnxruntime(DATA, name, TOL)


@pytest.mark.parametrize("name", strict_xfail_params(INDEX, XFAILS))
def test_gives_paddles_own_outputs(name):
    entry = INDEX[name]
    session = og.Session(from_onnx(os.path.join(DATA, name)))
    feeds = feed_sets(DATA, entry)[0]  # Paddle's outputs are of the first batch size
    got = session.run(entry["outputs"], feeds)
    for out, g, f in zip(entry["outputs"], got, entry["output_files"]):
        assert_same_array(g, load_array(DATA, f), f"{name} output {out!r} vs Paddle",
                          TOL, TOL)


def test_the_corpus_covers_what_it_promises():
    assert {e["exporter"] for e in INDEX.values()} == {"paddle2onnx"}
    assert {e["opset"] for e in INDEX.values()} >= {11, 13, 16, 17, 21}
    families = {e["family"] for e in INDEX.values()}
    assert len(families) >= 25
    assert {"resnet", "mobilenet_v3", "lstm", "gru", "transformer", "interpolate",
            "detection", "conv", "norms"} <= families
    dynamic = [f for f, e in INDEX.items() if e["dynamic"]]
    assert len(dynamic) >= 25
    assert len(INDEX) >= 60
    for name, e in INDEX.items():  # the dynamic files really leave the batch open
        assert e["dynamic"] in (False, "batch")
        assert bool(e.get("alt_input_files")) == bool(e["dynamic"]), name
        assert len(e["input_files"]) == len(e["inputs"])
        assert len(e["output_files"]) == len(e["outputs"])
        graph = onnx.load(os.path.join(DATA, name), load_external_data=False).graph
        dims = [i.type.tensor_type.shape.dim for i in graph.input]
        assert any(d.dim_param or not d.HasField("dim_value")
                   for ds in dims for d in ds) == bool(e["dynamic"]), name
        if e["dynamic"]:
            main, alt = (np.load(os.path.join(DATA, f[0]), allow_pickle=False).shape
                         for f in (e["input_files"], e["alt_input_files"]))
            assert main != alt, name
    # what paddle2onnx refused (or wrote wrong) is recorded, not silently dropped
    refused = {r["file"] for r in REFUSED}
    assert any(f.startswith("simple_rnn") for f in refused)
    assert {"paddle2onnx", "onnxruntime", "onnxruntime vs paddle"} <= {
        r["stage"] for r in REFUSED}
    assert all(r["refused"] and r["stage"] for r in REFUSED)
    total = sum(os.path.getsize(os.path.join(DATA, f)) for f in os.listdir(DATA))
    assert total < 5 * 1024 * 1024

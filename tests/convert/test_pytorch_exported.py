"""Models as PyTorch's exporters really write them, against onnxruntime.

data/pytorch_exported/ holds 26 small models (ResNet, MobileNetV2, EfficientNet, UNet,
a YOLO head, BERT, ViT, GPT, a Llama block, LSTM, GRU, a 1-D audio net and op
collections; random weights) written by torch 2.13's TorchScript exporter (opsets 17
and 20) and dynamo exporter (opsets 18 and 23), some with dynamic batch and sequence
axes, and their seeded inputs (index.json says which file feeds which input; *.alt.npy
are a second batch/sequence size). `tools/export_torch_models.py` wrote them. Each
must import, run in the Session as onnxruntime runs it, at both sizes when dynamic,
and come back from to_onnx to give onnxruntime the same outputs.
"""

import onnx
import pytest

import onegraph as og
from onegraph.convert import from_onnx, to_onnx

from .corpus import (assert_same_array, corpus_folder, feed_sets, load_index, model_file,
                     ort_outputs)

DATA = corpus_folder("pytorch_exported")
INDEX = load_index(DATA)

RTOL = ATOL = 1e-4


def _assert_same(got, want, what):
    assert_same_array(got, want, what, RTOL, ATOL)


@pytest.mark.parametrize("name", sorted(INDEX))
def test_runs_as_onnxruntime_does_and_round_trips(name):
    entry = INDEX[name]
    path, original = model_file(DATA, name)
    outputs = entry["outputs"]
    model = from_onnx(path)
    session = og.Session(model)
    exported = to_onnx(model)
    onnx.checker.check_model(exported, full_check=True)
    for k, feeds in enumerate(feed_sets(DATA, entry)):
        want = ort_outputs(original, feeds, outputs)
        got = session.run(outputs, feeds)
        back = ort_outputs(exported.SerializeToString(), feeds, outputs)
        for out, g, b, w in zip(outputs, got, back, want):
            _assert_same(g, w, f"{name} size {k} output {out!r}")
            _assert_same(b, w, f"{name} size {k} output {out!r} after to_onnx")


def test_the_corpus_covers_both_exporters_and_dynamic_axes():
    exporters = {e["exporter"] for e in INDEX.values()}
    assert exporters == {"ts", "dynamo"}
    assert sum(bool(e.get("alt_input_files")) for e in INDEX.values()) >= 8
    assert {e["opset"] for e in INDEX.values()} >= {17, 18, 20, 23}

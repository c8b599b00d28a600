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

import pytest

from .corpus import check_runs_as_onnxruntime, corpus_folder, load_index

DATA = corpus_folder("pytorch_exported")
INDEX = load_index(DATA)

TOL = 1e-4  # rtol and atol


@pytest.mark.parametrize("name", sorted(INDEX))
def test_runs_as_onnxruntime_does_and_round_trips(name):
    check_runs_as_onnxruntime(DATA, name, TOL)


def test_the_corpus_covers_both_exporters_and_dynamic_axes():
    exporters = {e["exporter"] for e in INDEX.values()}
    assert exporters == {"ts", "dynamo"}
    assert sum(bool(e.get("alt_input_files")) for e in INDEX.values()) >= 8
    assert {e["opset"] for e in INDEX.values()} >= {17, 18, 20, 23}

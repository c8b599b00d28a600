"""Record TF1's tf.saved_model constants, signature helpers and error messages for the
onegraph tests (tests/train/test_saved_model.py).

Run by hand with a TensorFlow venv (never from the tests):
    /tmp/s51/tfvenv/bin/python tools/record_tf_saved_model.py
Writes tests/train/data/tf1_saved_model_reference.json:
- "constants": tag_constants and signature_constants values;
- "signatures": method names and input/output keys predict/classification/regression
  signature_def build, and is_valid_signature on them;
- "values": a tiny linear model (w, b set by assign) saved with simple_save and loaded
  back: the outputs before saving and after loading, for inputs "x";
- "errors": the error class and message for a second save into an existing directory
  (export_dir shown as "D"), and for loading tags the directory does not hold.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

import tf_recording

tf.disable_eager_execution()

OUT = os.path.join(tf_recording.TRAIN_TESTS, "data", "tf1_saved_model_reference.json")

X = [[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]]
W = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
B = [0.1, -0.2, 0.3]


def _error(fn, root):
    try:
        fn()
    except Exception as e:  # recording whatever TF raises
        return [type(e).__name__, str(e).replace(root, "D")]
    return None


def main():
    sm = tf.saved_model
    constants = {
        "tag_constants": {k: getattr(sm.tag_constants, k)
                          for k in ("SERVING", "TRAINING", "GPU", "TPU")},
        "signature_constants": {k: getattr(sm.signature_constants, k) for k in (
            "DEFAULT_SERVING_SIGNATURE_DEF_KEY", "PREDICT_METHOD_NAME", "PREDICT_INPUTS",
            "PREDICT_OUTPUTS", "CLASSIFY_METHOD_NAME", "CLASSIFY_INPUTS",
            "CLASSIFY_OUTPUT_CLASSES", "CLASSIFY_OUTPUT_SCORES", "REGRESS_METHOD_NAME",
            "REGRESS_INPUTS", "REGRESS_OUTPUTS")}}
    root = tempfile.mkdtemp()
    out = {"constants": constants}
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        s = tf.placeholder(tf.string, [None], name="s")
        w = tf.Variable(tf.zeros([2, 3]), name="w")
        b = tf.Variable(tf.zeros([3]), name="b")
        y = tf.add(tf.matmul(x, w), b, name="y")
        classes = tf.as_string(tf.argmax(y, 1), name="classes")
        sdu = sm.signature_def_utils
        sigs = {"predict": sdu.predict_signature_def({"x": x}, {"y": y}),
                "classify": sdu.classification_signature_def(s, classes, y),
                "regress": sdu.regression_signature_def(s, y)}
        out["signatures"] = {
            k: {"method_name": v.method_name, "inputs": sorted(v.inputs),
                "outputs": sorted(v.outputs), "valid": bool(sdu.is_valid_signature(v)),
                "input_names": {i: t.name for i, t in v.inputs.items()},
                "output_names": {i: t.name for i, t in v.outputs.items()}}
            for k, v in sigs.items()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run([w.assign(W), b.assign(B)])
            before = sess.run(y, {x: X})
            d = os.path.join(root, "m")
            sm.simple_save(sess, d, inputs={"x": x}, outputs={"y": y})
            again = _error(lambda: sm.builder.SavedModelBuilder(d), root)
    with tf.Session(graph=tf.Graph()) as sess:
        meta = sm.loader.load(sess, [sm.tag_constants.SERVING], d)
        sig = meta.signature_def["serving_default"]
        after = sess.run(sess.graph.get_tensor_by_name(sig.outputs["y"].name),
                         {sess.graph.get_tensor_by_name(sig.inputs["x"].name): X})
        loaded_tags = list(meta.meta_info_def.tags)
        method = sig.method_name
    with tf.Session(graph=tf.Graph()) as sess:
        bad = _error(lambda: sm.loader.load(sess, ["nope"], d), root)
    with tf.Session(graph=tf.Graph()) as sess:
        missing = _error(lambda: sm.loader.load(sess, ["serve"], os.path.join(root, "no")),
                         root)
    out["values"] = {"x": X, "w": W, "b": B, "before": np.asarray(before).tolist(),
                     "after": np.asarray(after).tolist(), "tags": loaded_tags,
                     "method_name": method,
                     "maybe_dir": [bool(sm.loader.maybe_saved_model_directory(d)),
                                   bool(sm.loader.maybe_saved_model_directory(root))]}
    out["errors"] = {"exists": again, "bad_tags": bad, "missing_dir": missing}
    shutil.rmtree(root)
    tf_recording.write_reference(OUT, out)


if __name__ == "__main__":
    main()

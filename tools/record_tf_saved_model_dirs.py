"""Record TF1-style SavedModel directories written by TensorFlow itself, and TF's outputs,
into tests/train/data/tf_saved_models/ (run by hand with the scratch TF venv):

    /tmp/s51/tfvenv/bin/python tools/record_tf_saved_model_dirs.py

Each model is a directory (saved_model.pb + variables/) and NAME.npz holds the inputs fed
and the outputs TF gave, keyed "SIGNATURE/in/KEY" and "SIGNATURE/out/KEY" (tags "serve"
unless the key starts with the tag set, "train:SIGNATURE/..."). tf2_module is a TF2
object-based SavedModel (tf.saved_model.save), recorded in a child process (eager).
"""

import os
import shutil
import subprocess
import sys

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "train",
                   "data", "tf_saved_models")


def _fresh(name):
    path = os.path.join(OUT, name)
    if os.path.exists(path):
        shutil.rmtree(path)
    return path


def _record(tf, name, build, feeds, use_resource):
    """Build a graph, save it with simple_save / SavedModelBuilder, record TF's outputs
    by running the signatures' tensor names in a fresh session that loads the dir."""
    path = _fresh(name)
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(7)
        with tf.variable_scope("", use_resource=use_resource):
            save = build(tf)
        with tf.Session(graph=graph) as sess:
            sess.run(tf.global_variables_initializer())
            save(sess, path)
    values = {}
    for tags, prefix in ((["serve"], ""), (["train"], "train:")):
        with tf.Session(graph=tf.Graph()) as sess:
            try:
                meta = tf.saved_model.loader.load(sess, tags, path)
            except RuntimeError:
                continue
            for key, sig in meta.signature_def.items():
                feed = {sig.inputs[k].name: feeds[k] for k in sig.inputs}
                outs = sess.run({k: v.name for k, v in sig.outputs.items()}, feed)
                for k in sig.inputs:
                    values[f"{prefix}{key}/in/{k}"] = feeds[k]
                for k, v in outs.items():
                    values[f"{prefix}{key}/out/{k}"] = v
    np.savez(os.path.join(OUT, name + ".npz"), **values)
    print(name, sorted(values))


def _dense(tf, x, units, name):
    """x @ kernel + bias (tf.layers is gone with Keras 3; the same ops and names)."""
    with tf.variable_scope(name):
        k = tf.get_variable("kernel", [x.shape[-1], units])
        b = tf.get_variable("bias", [units],
                            initializer=tf.random_normal_initializer(stddev=0.1))
        return tf.nn.bias_add(tf.matmul(x, k), b)


def _mlp(tf):
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    h = tf.nn.relu(_dense(tf, x, 8, "hidden"))
    y = _dense(tf, h, 3, "logits")

    def save(sess, path):
        tf.saved_model.simple_save(sess, path, inputs={"x": x}, outputs={"y": y})
    return save


def _cnn(tf):
    x = tf.placeholder(tf.float32, [None, 6, 6, 2], name="images")
    with tf.variable_scope("conv"):
        k = tf.get_variable("kernel", [3, 3, 2, 4])
        c = tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME")
    stats = {}
    with tf.variable_scope("bn"):
        for n in ("gamma", "beta", "moving_mean", "moving_variance"):
            stats[n] = tf.get_variable(n, [4], initializer=tf.random_uniform_initializer(
                0.5, 1.5), trainable=n in ("gamma", "beta"))
        b, _, _ = tf.nn.fused_batch_norm(c, stats["gamma"], stats["beta"],
                                         stats["moving_mean"], stats["moving_variance"],
                                         epsilon=1e-3, is_training=False)
    r = tf.nn.relu(b)
    p = tf.nn.max_pool2d(r, 2, 2, "VALID")
    y = _dense(tf, tf.reshape(p, [-1, 36]), 5, "out")
    probs = tf.nn.softmax(y, name="probs")

    def save(sess, path):
        tf.saved_model.simple_save(sess, path, inputs={"images": x},
                                   outputs={"logits": y, "probs": probs})
    return save


def _two(tf):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    scale = tf.placeholder(tf.float32, [], name="scale")
    w = tf.get_variable("w", [3, 2])
    b = tf.get_variable("b", [2], initializer=tf.constant_initializer([0.5, -0.25]))
    y = tf.matmul(x, w) + b
    z = tf.reduce_sum(y * scale, axis=1, name="z")

    def save(sess, path):
        sdu = tf.saved_model.signature_def_utils
        builder = tf.saved_model.builder.SavedModelBuilder(path)
        serve = {"serving_default": sdu.predict_signature_def({"x": x}, {"y": y}),
                 "scaled": sdu.predict_signature_def({"x": x, "scale": scale},
                                                     {"z": z, "y": y})}
        builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map=serve)
        builder.add_meta_graph(["train"], signature_def_map={
            "sum": sdu.predict_signature_def({"x": x, "scale": scale}, {"total": z})})
        builder.save()
    return save


def _tf2_module():
    import tensorflow as tf

    class M(tf.Module):
        def __init__(self):
            self.w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])

        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
        def __call__(self, x):
            return {"y": tf.matmul(x, self.w)}

    m = M()
    tf.saved_model.save(m, _fresh("tf2_module"), signatures=m.__call__)


def main():
    if sys.argv[1:] == ["--tf2"]:
        _tf2_module()
        return
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(0)
    x4 = rng.normal(size=(5, 4)).astype(np.float32)
    _record(tf, "mlp_ref", _mlp, {"x": x4}, use_resource=False)
    _record(tf, "mlp_res", _mlp, {"x": x4}, use_resource=True)
    imgs = rng.normal(size=(2, 6, 6, 2)).astype(np.float32)
    _record(tf, "cnn_bn", _cnn, {"images": imgs}, use_resource=False)
    feeds = {"x": rng.normal(size=(4, 3)).astype(np.float32),
             "scale": np.float32(1.5)}
    _record(tf, "two_sigs_res", _two, feeds, use_resource=True)
    subprocess.run([sys.executable, __file__, "--tf2"], check=True)


if __name__ == "__main__":
    main()

"""Record TF2 object-based SavedModel directories (tf.saved_model.save of tf.Modules, eager)
and TF's outputs into tests/train/data/tf2_saved_models/ (run by hand, scratch TF venv):

    /tmp/s51/tfvenv/bin/python tools/record_tf2_saved_model_dirs.py

TF2 SavedModels are written from eager tf.functions, so this recorder runs TF eagerly (the
TF1 recorders' tf.compat.v1 graph mode cannot write them). Each model is a directory
(saved_model.pb + variables/); NAME.npz holds the inputs fed and the outputs TF gave
through the reloaded model's signatures (tf.saved_model.load(...).signatures[KEY]), keyed
"SIGNATURE/in/KEY" and "SIGNATURE/out/KEY".
"""

import os
import shutil

import numpy as np
import tensorflow as tf

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "train",
                   "data", "tf2_saved_models")


def _fresh(name):
    path = os.path.join(OUT, name)
    if os.path.exists(path):
        shutil.rmtree(path)
    return path


def _record(name, module, feeds, signatures=None):
    """Save module, reload it with TF and record each signature's outputs for feeds."""
    path = _fresh(name)
    tf.saved_model.save(module, path, signatures=signatures)
    loaded = tf.saved_model.load(path)
    values = {}
    for key, fn in loaded.signatures.items():
        ins = {k: feeds[k] for k in fn.structured_input_signature[1]}
        outs = fn(**{k: tf.constant(v) for k, v in ins.items()})
        for k, v in ins.items():
            values[f"{key}/in/{k}"] = v
        for k, v in outs.items():
            values[f"{key}/out/{k}"] = v.numpy()
    np.savez(os.path.join(OUT, name + ".npz"), **values)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
    print(name, size, sorted(values))


class Mlp(tf.Module):
    def __init__(self, rng):
        super().__init__(name="mlp")
        self.w1 = tf.Variable(rng.normal(size=(4, 8)).astype(np.float32), name="w1")
        self.b1 = tf.Variable(rng.normal(size=(8,)).astype(np.float32), name="b1")
        self.w2 = tf.Variable(rng.normal(size=(8, 3)).astype(np.float32), name="w2")
        self.b2 = tf.Variable(rng.normal(size=(3,)).astype(np.float32), name="b2")

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
    def __call__(self, x):
        h = tf.nn.relu(tf.matmul(x, self.w1) + self.b1)
        return {"y": tf.matmul(h, self.w2) + self.b2}


class Dense(tf.Module):
    def __init__(self, rng, n_in, n_out, name):
        super().__init__(name=name)
        self.kernel = tf.Variable(rng.normal(size=(n_in, n_out)).astype(np.float32))
        self.bias = tf.Variable(rng.normal(size=(n_out,)).astype(np.float32))

    def __call__(self, x):
        return tf.matmul(x, self.kernel) + self.bias


class Cnn(tf.Module):
    """Nested modules: checkpoint keys are object paths ("head/kernel/...")."""

    def __init__(self, rng):
        super().__init__(name="cnn")
        self.filters = tf.Variable(rng.normal(size=(3, 3, 2, 4)).astype(np.float32))
        self.conv_bias = tf.Variable(rng.normal(size=(4,)).astype(np.float32))
        self.head = Dense(rng, 4, 3, "head")

    @tf.function(input_signature=[tf.TensorSpec([None, 6, 6, 2], tf.float32)])
    def __call__(self, images):
        h = tf.nn.conv2d(images, self.filters, strides=1, padding="SAME")
        h = tf.nn.relu(tf.nn.bias_add(h, self.conv_bias))
        h = tf.reduce_mean(h, axis=[1, 2])
        return {"logits": self.head(h)}


class TwoSigs(tf.Module):
    def __init__(self, rng):
        super().__init__(name="two")
        self.w = tf.Variable(rng.normal(size=(3, 2)).astype(np.float32))
        self.b = tf.Variable(rng.normal(size=(2,)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def predict(self, x):
        return {"y": tf.matmul(x, self.w) + self.b}

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32),
                                  tf.TensorSpec([], tf.float32)])
    def scaled(self, x, scale):
        y = tf.matmul(x, self.w) * scale
        return {"y": y, "norm": tf.reduce_sum(y * y, axis=1)}


class Control(tf.Module):
    """tf.cond on a variable-dependent predicate and a tf.while_loop reading a variable."""

    def __init__(self, rng):
        super().__init__(name="control")
        self.w = tf.Variable(rng.normal(size=(3, 3)).astype(np.float32))
        self.threshold = tf.Variable(np.float32(0.25))

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32),
                                  tf.TensorSpec([], tf.int32)])
    def __call__(self, x, steps):
        y = tf.cond(tf.reduce_mean(x) > self.threshold,
                    lambda: tf.matmul(x, self.w), lambda: x - self.threshold)
        i0 = tf.constant(0)

        def body(i, acc):
            return i + 1, tf.tanh(tf.matmul(acc, self.w))
        _, z = tf.while_loop(lambda i, acc: i < steps, body, [i0, y])
        return {"y": y, "z": z}


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(0)
    mlp = Mlp(rng)
    _record("mlp", mlp, {"x": rng.normal(size=(5, 4)).astype(np.float32)})
    cnn = Cnn(rng)
    _record("cnn", cnn, {"images": rng.normal(size=(2, 6, 6, 2)).astype(np.float32)})
    two = TwoSigs(rng)
    _record("two_sigs", two, {"x": rng.normal(size=(4, 3)).astype(np.float32),
                              "scale": np.float32(1.5)},
            signatures={"serving_default": two.predict, "scaled": two.scaled})
    ctl = Control(rng)
    feeds = {"x": np.abs(rng.normal(size=(4, 3))).astype(np.float32),
             "steps": np.int32(3)}
    _record("control", ctl, feeds)
    # the cond's other branch too: a second recording of the same dir's signature
    loaded = tf.saved_model.load(os.path.join(OUT, "control"))
    neg = -feeds["x"]
    outs = loaded.signatures["serving_default"](x=tf.constant(neg), steps=tf.constant(2))
    np.savez(os.path.join(OUT, "control_else.npz"),
             **{"serving_default/in/x": neg, "serving_default/in/steps": np.int32(2)},
             **{f"serving_default/out/{k}": v.numpy() for k, v in outs.items()})


if __name__ == "__main__":
    main()

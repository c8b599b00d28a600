"""Record TensorFlow's tf.compat.v1 outputs for the TF1-compatibility test cases.

Needs tensorflow (not a onegraph dependency); run it by hand when a case list changes:

    python tools/record_tf1_reference.py image   # tests/train/tf1_image_cases.py
    python tools/record_tf1_reference.py nn      # tests/train/tf1_nn_cases.py

Each writes tests/train/data/tf1_<name>_reference.npz holding the inputs ("in/<key>"),
each case's output ("out/<case>") and, for the nn cases, the gradients of
sum(output * R) ("grad/<case>/<key>", R stored as "r/<case>"), so the tests compare
onegraph with what TensorFlow computed without TensorFlow installed.
"""

from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "tests", "train")
sys.path.insert(0, TESTS)


def _image_cases(tf, arrays: dict) -> int:
    from tf1_image_cases import CASES, make_inputs

    inputs = make_inputs()
    arrays.update({f"in/{k}": v for k, v in inputs.items()})
    for name, fn, key, kwargs in CASES:
        out = getattr(tf.compat.v1.image, fn)(tf.constant(inputs[key]), **kwargs)
        arrays[f"out/{name}"] = np.asarray(out)
    return len(CASES)


def _nn_cases(tf, arrays: dict) -> int:
    from tf1_nn_cases import CASES, make_inputs

    inputs = make_inputs()
    arrays.update({f"in/{k}": v for k, v in inputs.items()})
    rng = np.random.RandomState(7)
    for name, path, args, kwargs, wrt in CASES:
        fn = tf.compat.v1
        for part in path.split("."):
            fn = getattr(fn, part)
        held = {k[1:]: tf.Variable(inputs[k[1:]]) for k in wrt}

        def value(v):
            if isinstance(v, str) and v.startswith("@"):
                return held.get(v[1:], tf.constant(inputs[v[1:]]))
            return v

        with tf.GradientTape() as tape:
            out = fn(*[value(a) for a in args], **{k: value(v) for k, v in kwargs.items()})
            r = rng.randn(*out.shape).astype(out.dtype.as_numpy_dtype)
            loss = tf.reduce_sum(out * r)
        grads = tape.gradient(loss, [held[k[1:]] for k in wrt])
        arrays[f"out/{name}"] = np.asarray(out)
        arrays[f"r/{name}"] = r
        for k, g in zip(wrt, grads):
            arrays[f"grad/{name}/{k[1:]}"] = np.asarray(g)
    return len(CASES)


def main(argv: list[str]) -> int:
    """Write tests/train/data/tf1_<which>_reference.npz for argv[0] in (image, nn)."""
    import tensorflow as tf

    record = {"image": _image_cases, "nn": _nn_cases}
    if len(argv) != 1 or argv[0] not in record:
        print(__doc__)
        return 2
    path = os.path.join(TESTS, "data", f"tf1_{argv[0]}_reference.npz")
    arrays = {"tensorflow_version": np.asarray(tf.__version__)}
    count = record[argv[0]](tf, arrays)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        np.savez_compressed(f, **arrays)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    print(f"wrote {count} cases to {path} (tensorflow {tf.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

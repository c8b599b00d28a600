"""Record TF1's tf.initializers short names, the identity initializer and the
uniform-unit-scaling bounds for tests/train/test_initializer_names.py.

Run by hand with the scratch TensorFlow venv:
    /tmp/s51/tfvenv/bin/python tools/record_tf_initializer_names.py
Writes tests/train/data/tf1_initializer_names_reference.json.
"""

from __future__ import annotations

import numpy as np
import tensorflow.compat.v1 as tf
from tf_recording import TRAIN_TESTS, write_reference

tf.disable_eager_execution()

SHORT = ("constant", "zeros", "ones", "identity", "random_normal", "truncated_normal",
         "random_uniform", "glorot_normal", "glorot_uniform", "orthogonal",
         "variance_scaling", "uniform_unit_scaling")
# (shape, factor) draws whose largest magnitude approaches the bound
UNIT_SCALING = (([400, 300], 1.0), ([3, 3, 16, 8], 1.5), ([5000], 2.0), ([2, 50, 7], 0.5))


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


def main():
    out = {"short_names": {n: getattr(tf.initializers, n).__name__ for n in SHORT},
           "identity": {}, "unit_scaling": []}
    for shape, gain, dtype in (([2, 3], 2.0, "float32"), ([3, 3], 1.0, "float64"),
                               ([4, 2], 0.5, "float32")):
        init = tf.initializers.identity(gain=gain)
        value = _run(init(shape, dtype=getattr(tf, dtype)))
        out["identity"][f"{shape}-{gain}-{dtype}"] = {"value": value.tolist(),
                                                     "dtype": str(value.dtype)}
    try:
        tf.initializers.identity()([2, 2, 2])
    except ValueError as e:
        out["identity_3d_error"] = str(e)
    for shape, factor in UNIT_SCALING:
        value = _run(tf.uniform_unit_scaling_initializer(factor=factor, seed=7)(shape))
        out["unit_scaling"].append({"shape": shape, "factor": factor,
                                    "max_abs": float(np.abs(value).max()),
                                    "dtype": str(value.dtype)})
    write_reference(TRAIN_TESTS / "data" / "tf1_initializer_names_reference.json", out)


if __name__ == "__main__":
    main()

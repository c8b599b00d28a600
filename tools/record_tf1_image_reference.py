"""Record TensorFlow's tf.compat.v1.image outputs for the og.image test cases.

Needs tensorflow (not a onegraph dependency); run it by hand when the cases change:

    python tools/record_tf1_image_reference.py [tests/train/data/tf1_image_reference.npz]

The file holds each input ("in/<name>") and each case's output ("out/<case>"), so the
test compares og.image with what TensorFlow computed, without TensorFlow installed.
"""

from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "train"))

from tf1_image_cases import CASES, make_inputs  # noqa: E402


def main(argv: list[str]) -> int:
    """Write the reference file (default tests/train/data/tf1_image_reference.npz)."""
    import tensorflow as tf

    path = argv[0] if argv else os.path.join(HERE, "..", "tests", "train", "data",
                                             "tf1_image_reference.npz")
    inputs = make_inputs()
    arrays = {f"in/{k}": v for k, v in inputs.items()}
    for name, fn, key, kwargs in CASES:
        out = getattr(tf.compat.v1.image, fn)(tf.constant(inputs[key]), **kwargs)
        arrays[f"out/{name}"] = np.asarray(out)
    arrays["tensorflow_version"] = np.asarray(tf.__version__)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        np.savez_compressed(f, **arrays)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    print(f"wrote {len(CASES)} cases to {path} (tensorflow {tf.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

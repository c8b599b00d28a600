"""Record what TensorFlow's init_from_checkpoint and warm_start do in the scenarios of
tests/train/warm_start_cases.py, for tests/train/test_warm_start.py.

Needs tensorflow (not a onegraph dependency); run it by hand when the scenarios change:

    python tools/record_tf_warm_start.py

It reads the "basic" checkpoint of tests/train/data/tf_checkpoints (written by
tools/record_tf_checkpoints.py) and writes tests/train/data/tf1_warm_start_reference.json:
{scenario name: {"values": {variable name: value as nested lists}} or {"error": true,
"type": TF's exception class name}}.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "train", "data")
sys.path.insert(0, os.path.join(HERE, "..", "tests", "train"))

import warm_start_cases as cases  # noqa: E402


def main() -> None:
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
    expected = np.load(os.path.join(DATA, "tf_checkpoints", "expected.npz"),
                       allow_pickle=False)
    ckpt = os.path.join(DATA, "tf_checkpoints", "basic", str(expected["prefix/basic"],
                                                              "utf-8"))
    recorded = {s.__name__: cases.outcome(tf, s, ckpt) for s in cases.SCENARIOS}
    for name, result in recorded.items():
        print(name, result)
    with open(os.path.join(DATA, "tf1_warm_start_reference.json"), "w") as f:
        json.dump(recorded, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()

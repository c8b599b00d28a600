"""Record TensorFlow's values for the sparse-tensor code of tests/train/sparse_api_cases.py,
for tests/train/test_sparse_api.py.

Needs tensorflow (not a onegraph dependency); run it by hand when the cases change:

    python tools/record_tf_sparse_api.py

It writes tests/train/data/tf1_sparse_api_reference.json ({case: {name: value} or
{"error": class name}}).
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "train", "data")
sys.path.insert(0, os.path.join(HERE, "..", "tests", "train"))

import sparse_api_cases as cases  # noqa: E402


def main() -> None:
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
    recorded = {name: cases.run(tf, name) for name in cases.CASES}
    for name, result in recorded.items():
        print(name, json.dumps(result)[:300])
    with open(os.path.join(DATA, "tf1_sparse_api_reference.json"), "w") as f:
        json.dump(recorded, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()

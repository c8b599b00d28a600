"""Record TensorFlow's results for the tf.distributions code of
tests/train/distributions_cases.py, for tests/train/test_distributions.py.

Needs tensorflow (not a onegraph dependency); run it by hand when the cases change:

    /tmp/s51/tfvenv/bin/python tools/record_tf_distributions.py

It writes tests/train/data/tf1_distributions_reference.json through a temporary file
renamed into place.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "train", "data")
sys.path.insert(0, os.path.join(HERE, "..", "tests", "train"))

import distributions_cases as cases  # noqa: E402


def main() -> None:
    """Run every case under tf.compat.v1 and write the JSON reference."""
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
    recorded = {name: cases.run(tf, name) for name in cases.CASES}
    for name, result in recorded.items():
        print(name, json.dumps(result)[:300])
    path = os.path.join(DATA, "tf1_distributions_reference.json")
    with open(path + ".tmp", "w") as f:
        json.dump(recorded, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()

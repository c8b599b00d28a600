"""Record TensorFlow's results for the tf.distributions code of
tests/train/distributions_cases.py, for tests/train/test_distributions.py.

Needs tensorflow (not a onegraph dependency); run it by hand when the cases change:

    /tmp/s51/tfvenv/bin/python tools/record_tf_distributions.py

It writes tests/train/data/tf1_distributions_reference.json through a temporary file
renamed into place.
"""

from __future__ import annotations

from tf_recording import record_cases

if __name__ == "__main__":
    record_cases("distributions_cases", "tf1_distributions_reference.json")

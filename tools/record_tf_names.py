"""Record more TF1 top-level names for tests/train/test_tf1_names.py.

Run by hand with the scratch TensorFlow venv:
    /tmp/s51/tfvenv/bin/python tools/record_tf_names.py
Runs tests/train/tf1_names_cases.py under tf.compat.v1 and writes
tests/train/data/tf1_names_reference.json.
"""

from __future__ import annotations

from tf_recording import record_cases

if __name__ == "__main__":
    record_cases("tf1_names_cases", "tf1_names_reference.json")

"""Record TF1's tf.gradients / Optimizer argument handling for
tests/train/test_gradient_args.py.

Run by hand with the scratch TensorFlow venv:
    /tmp/s51/tfvenv/bin/python tools/record_tf_gradient_args.py
Runs tests/train/gradient_args_cases.py under tf.compat.v1 and writes
tests/train/data/tf1_gradient_args_reference.json.
"""

from __future__ import annotations

from tf_recording import record_cases

if __name__ == "__main__":
    record_cases("gradient_args_cases", "tf1_gradient_args_reference.json")

"""Record TF1's Variable / get_variable / variable_scope arguments for
tests/train/test_variable_args.py.

Run by hand with the scratch TensorFlow venv:
    /tmp/s51/tfvenv/bin/python tools/record_tf_variable_args.py
Runs tests/train/variable_args_cases.py under tf.compat.v1 and writes
tests/train/data/tf1_variable_args_reference.json.
"""

from __future__ import annotations

from tf_recording import record_cases

if __name__ == "__main__":
    record_cases("variable_args_cases", "tf1_variable_args_reference.json")

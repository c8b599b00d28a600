"""Record TF1's behaviour around uninitialized variables for
tests/train/test_uninitialized_variables.py.

Run by hand with the scratch TensorFlow venv:
    /tmp/s51/tfvenv/bin/python tools/record_tf_uninitialized.py
Runs tests/train/uninitialized_cases.py under tf.compat.v1 with TF1's reference
variables (TF 2's compat.v1 makes resource variables, whose assert_variables_initialized
reads only the static rank and so never fails) and writes
tests/train/data/tf1_uninitialized_reference.json.
"""

from __future__ import annotations

from tf_recording import record_cases

if __name__ == "__main__":
    import tensorflow.compat.v1 as tf

    tf.disable_resource_variables()
    record_cases("uninitialized_cases", "tf1_uninitialized_reference.json")

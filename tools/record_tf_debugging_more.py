"""Record TF1's debugging checks for tests/train/test_debugging_more.py.

Run by hand with the scratch TensorFlow venv:
    /tmp/s51/tfvenv/bin/python tools/record_tf_debugging_more.py
Runs tests/train/debugging_more_cases.py under tf.compat.v1 and writes
tests/train/data/tf1_debugging_more_reference.json.
"""

from __future__ import annotations

from tf_recording import record_cases

if __name__ == "__main__":
    import tensorflow.compat.v1 as tf

    tf.disable_control_flow_v2()   # TF1's cond, which add_check_numerics_ops refuses
    record_cases("debugging_more_cases", "tf1_debugging_more_reference.json")

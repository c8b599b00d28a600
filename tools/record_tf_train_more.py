"""Record TF1's behaviour of the rest of tf.train (SessionManager, the checkpoint state
file, AdagradDAOptimizer, GlobalStepWaiterHook, ProfilerHook, basic_train_loop,
LooperThread, match_filenames_once, VocabInfo, ClusterSpec, replica_device_setter) for
tests/train/test_train_more.py.

Run by hand with the scratch TensorFlow venv:
    /tmp/s51/tfvenv/bin/python tools/record_tf_train_more.py
Runs tests/train/train_more_cases.py under tf.compat.v1 and writes
tests/train/data/tf1_train_more_reference.json.
"""

from __future__ import annotations

from tf_recording import record_cases

if __name__ == "__main__":
    record_cases("train_more_cases", "tf1_train_more_reference.json")

"""Record TensorFlow's results for the set-operation code of tests/train/sets_cases.py,
for tests/train/test_sets.py.

Needs tensorflow (not a onegraph dependency); run it by hand when the cases change:

    /tmp/s51/tfvenv/bin/python tools/record_tf_sets.py

It writes tests/train/data/tf1_sets_reference.json ({case: {"static", "values"} or
{"error", "message", "stage"}}), through a temporary file renamed into place.
"""

from __future__ import annotations

from tf_recording import record_cases

if __name__ == "__main__":
    record_cases("sets_cases", "tf1_sets_reference.json")

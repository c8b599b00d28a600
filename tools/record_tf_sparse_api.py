"""Record TensorFlow's values for the sparse-tensor code of tests/train/sparse_api_cases.py,
for tests/train/test_sparse_api.py.

Needs tensorflow (not a onegraph dependency); run it by hand when the cases change:

    python tools/record_tf_sparse_api.py

It writes tests/train/data/tf1_sparse_api_reference.json ({case: {name: value} or
{"error": class name}}).
"""

from __future__ import annotations

from tf_recording import record_cases

if __name__ == "__main__":
    record_cases("sparse_api_cases", "tf1_sparse_api_reference.json")

"""Record TensorFlow's values for the sparse code of tests/train/sparse_more_cases.py
(mask, merge, reset_shape, split, expand_dims, eye, bincount), for
tests/train/test_sparse_more.py.

Needs tensorflow (not a onegraph dependency); run it by hand when the cases change:

    python tools/record_tf_sparse_more.py

It writes tests/train/data/tf1_sparse_more_reference.json ({case: {name: value} or
{"error": class name}}).
"""

from __future__ import annotations

from tf_recording import record_cases

if __name__ == "__main__":
    record_cases("sparse_more_cases", "tf1_sparse_more_reference.json")

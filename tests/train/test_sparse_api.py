"""og.SparseTensor and og.sparse against TensorFlow.

The code of sparse_api_cases.py ran under tf.compat.v1; tools/record_tf_sparse_api.py
stored its values (or that it raised) in data/tf1_sparse_api_reference.json. The same
code runs here under onegraph and must give the same values (floats to float32
rounding), or raise. The ops' own cases are in tests/ops/test_sparse_ops.py.
"""

from __future__ import annotations

import json
import os

import pytest

import onegraph as og

from . import sparse_api_cases as cases
from .tf1_reference import same_nested

with open(os.path.join(os.path.dirname(__file__), "data",
                       "tf1_sparse_api_reference.json")) as _f:
    REFERENCE = json.load(_f)


@pytest.mark.parametrize("case", sorted(cases.CASES))
def test_case_matches_tensorflow(case):
    want = REFERENCE[case]
    got = cases.run(og, case)
    if "error" in want:
        assert "error" in got, f"TF raised {want['error']}; onegraph gave {got}"
        return
    assert "error" not in got, f"onegraph raised {got['error']}"
    same_nested(got, want, case)


def test_sparse_tensor_refuses_bad_parts():
    with og.Graph().as_default():
        with pytest.raises(ValueError, match="indices hold 2 entries, values 3"):
            og.SparseTensor([[0, 0], [1, 1]], [1.0, 2.0, 3.0], [2, 2])
        with pytest.raises(ValueError, match="indices have rank 2, dense_shape 3"):
            og.SparseTensor([[0, 0]], [1.0], [2, 2, 2])
        with pytest.raises(TypeError, match="indices must be int64"):
            og.SparseTensor([[0.5, 0.0]], [1.0], [2, 2])
        sp = og.SparseTensor([[0, 0]], [1.0], [2, 2])
        with pytest.raises(TypeError, match="not a Tensor"):
            og.add(sp, 1.0)
        with pytest.raises(TypeError, match="needs a SparseTensor"):
            og.sparse.to_dense(og.constant([1.0]))
        p = og.sparse_placeholder(og.float32)
        with og.Session() as sess:
            with pytest.raises(TypeError, match="SparseTensorValue"):
                sess.run(og.sparse.to_dense(p), {p: [1.0, 2.0]})

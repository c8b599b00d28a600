"""og.sparse's mask, merge, reset_shape, split, expand_dims, eye and bincount (and
their TF1 top-level names) against TensorFlow.

The code of sparse_more_cases.py ran under tf.compat.v1; tools/record_tf_sparse_more.py
stored its values (or the class of what it raised) in
data/tf1_sparse_more_reference.json. The same code runs here under onegraph and must
give the same values (floats to float32 rounding), dtypes and static shapes, or raise
the same class. A check TF's kernels make when the graph runs is an og.Assert here:
TF's InvalidArgumentError is og's ExecutionError (or its InvalidArgumentError).
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import onegraph as og

from . import sparse_more_cases as cases
from .tf1_reference import same_nested

with open(os.path.join(os.path.dirname(__file__), "data",
                       "tf1_sparse_more_reference.json")) as _f:
    REFERENCE = json.load(_f)

_RUN_TIME = {"InvalidArgumentError": ("InvalidArgumentError", "ExecutionError")}


def test_enough_scenarios_recorded():
    assert sorted(REFERENCE) == sorted(cases.CASES)
    assert len(REFERENCE) >= 30


@pytest.mark.parametrize("case", sorted(cases.CASES))
def test_case_matches_tensorflow(case):
    want = REFERENCE[case]
    got = cases.run(og, case)
    if "error" in want:
        assert "error" in got, f"TF raised {want['error']}; onegraph gave {got}"
        assert got["error"] in _RUN_TIME.get(want["error"], (want["error"],)), \
            f"TF raised {want['error']}, onegraph {got['error']}"
        return
    assert "error" not in got, f"onegraph raised {got['error']}"
    same_nested(got, want, case)


def test_namespaces_have_tf1_names():
    for name in ("bincount", "expand_dims", "eye", "mask", "merge", "reset_shape", "split"):
        assert callable(getattr(og.sparse, name)), name
    for name in ("sparse_mask", "sparse_merge", "sparse_reset_shape", "sparse_split"):
        assert callable(getattr(og, name)), name


def test_messages_name_the_problem():
    with og.Graph().as_default():
        sp = og.SparseTensor([[0, 1]], [1.0], [2, 3])
        with pytest.raises(ValueError, match="Keyword arguments are required"):
            og.sparse.split(sp, 2, 1)
        with pytest.raises(ValueError, match="num_split must be >= 1"):
            og.sparse.split(sp_input=sp, num_split=0, axis=1)
        with pytest.raises(TypeError, match="needs a SparseTensor"):
            og.sparse.reset_shape(og.constant([1.0]))
        with pytest.raises(TypeError, match="must be an IndexedSlices"):
            og.sparse.mask(sp, [0])
        with pytest.raises(TypeError, match="num_rows must be an integer value"):
            og.sparse.eye(2.5)
        with pytest.raises(ValueError, match="mutually exclusive"):
            og.sparse.bincount([1, 2], weights=[1.0, 1.0], binary_output=True)


def test_split_and_bincount_of_fed_values():
    # values known only at run time: the cuts and counts are computed in the graph
    g = og.Graph()
    with g.as_default():
        sp = og.SparseTensor([[0, 1], [1, 4], [2, 2]], og.placeholder(og.float32, [3], "v"),
                             [3, 5])
        first, second = og.sparse.split(sp_input=sp, num_split=2, axis=1)
        counts = og.sparse.bincount(og.placeholder(og.int64, [2, 3], "ids"), axis=-1)
        out = {"a": og.sparse.to_dense(first), "b": og.sparse.to_dense(second),
               "c": og.sparse.to_dense(counts)}
        feed = {"v:0": np.array([1.0, 2.0, 3.0], np.float32),
                "ids:0": np.array([[1, 1, 3], [0, 2, 2]], np.int64)}
        with og.Session() as sess:
            want = sess.run(out, feed)
    np.testing.assert_array_equal(want["a"], [[0, 1, 0], [0, 0, 0], [0, 0, 3]])
    np.testing.assert_array_equal(want["b"], [[0, 0], [0, 2], [0, 0]])
    np.testing.assert_array_equal(want["c"], [[0, 2, 0, 1], [1, 0, 2, 0]])

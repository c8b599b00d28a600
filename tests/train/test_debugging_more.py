"""og's assert_rank_in, assert_same_float_dtype, assert_proper_iterable,
verify_tensor_all_finite / debugging.assert_all_finite, add_check_numerics_ops,
is_numeric_tensor and the monotonicity checks, against TF1's recorded behaviour
(tools/record_tf_debugging_more.py runs tests/train/debugging_more_cases.py under
tf.compat.v1; data/tf1_debugging_more_reference.json)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import onegraph as og

from . import debugging_more_cases as cases

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                  "tf1_debugging_more_reference.json")))


@pytest.mark.parametrize("name", cases.CASES)
def test_agrees_with_tf1(name):
    assert cases.run(og, name) == REF[name]


def test_messages_name_the_tensor_and_the_ranks():
    with og.Graph().as_default():
        x = og.zeros([2, 3], name="x")
        with pytest.raises(ValueError, match=r"must have rank in \(0, 1\).*Received rank 2"):
            og.assert_rank_in(x, [0, 1])
        p = og.placeholder(og.float32, None)
        check = og.assert_rank_in(p, [1])
        with og.Session() as sess:
            with pytest.raises(og.errors.InvalidArgumentError, match="must have rank in"):
                sess.run(check, {p: np.zeros([2, 2], np.float32)})
        with pytest.raises(TypeError, match="ranks"):
            og.assert_rank_in(x, 2)
    with pytest.raises(TypeError, match="message"):
        og.verify_tensor_all_finite(og.zeros([1]))


def test_check_numerics_ops_name_each_tensor():
    with og.Graph().as_default():
        p = og.placeholder(og.float32, [2], name="p")
        y = og.log(p, name="lg")
        check = og.add_check_numerics_ops()
        with og.Session() as sess:
            with pytest.raises(og.errors.InvalidArgumentError, match="lg"):
                sess.run([y, check], {p: [0.0, 1.0]})

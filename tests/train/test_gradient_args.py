"""og.gradients and Optimizer.minimize / compute_gradients with TF1's argument lists,
against TF 2.21's recorded values (tools/record_tf_gradient_args.py runs
tests/train/gradient_args_cases.py under tf.compat.v1)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import onegraph as og

from . import gradient_args_cases as cases

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                  "tf1_gradient_args_reference.json")))


def _close(got, want):
    if isinstance(want, list) and want and isinstance(want[0], str):
        assert got == want
    elif isinstance(want, (list, float)):
        np.testing.assert_allclose(np.asarray(got, float), np.asarray(want, float),
                                   rtol=2e-6, atol=1e-6)
    else:
        assert got == want


@pytest.mark.parametrize("name", cases.CASES)
def test_agrees_with_tf1(name):
    got, want = cases.run(og, name), REF[name]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _close(g, w)


def test_constraint_applies_after_each_update():
    # TF1's optimizers set var = var.constraint(var) after the variable's update
    with og.Graph().as_default():
        w = og.Variable(np.array([2.0, -3.0], np.float32), name="w")
        w.constraint = lambda v: og.clip_by_value(v, -1.0, 1.0)
        loss = og.reduce_sum(w * np.float32(-1.0))
        train = og.train.GradientDescentOptimizer(0.5).minimize(loss)
        with og.Session() as sess:
            sess.run(train)
            np.testing.assert_array_equal(sess.run(w), [1.0, -1.0])

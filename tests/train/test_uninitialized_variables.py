"""og.report_uninitialized_variables, is_variable_initialized, Variable.is_initialized,
assert_variables_initialized and Scaffold's default readiness checks, against TF1's
recorded behaviour (tools/record_tf_uninitialized.py runs tests/train/
uninitialized_cases.py under tf.compat.v1; data/tf1_uninitialized_reference.json)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import onegraph as og

from . import uninitialized_cases as cases

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                  "tf1_uninitialized_reference.json")))


@pytest.mark.parametrize("name", cases.CASES)
def test_agrees_with_tf1(name):
    assert cases.run(og, name) == REF[name]


def test_variable_is_initialized_method_and_array_variables():
    # og starts a variable made from an array at its value (TF1 does not): it is
    # never reported; Variable.is_initialized is TF1's method
    with og.Graph().as_default():
        a = og.Variable(np.zeros(2, np.float32), name="a")
        b = og.Variable(og.ones([2]) * 3.0, name="b")
        flags = [a.is_initialized(), b.is_initialized(name="b_ready")]
        assert flags[1].name.startswith("b_ready")
        with og.Session() as sess:
            assert sess.run(flags) == [True, False]
            assert list(sess.run(og.report_uninitialized_variables())) == ["b"]
            sess.run(b.initializer)
            assert sess.run(flags) == [True, True]


def test_uninitialized_read_is_a_failed_precondition_and_an_execution_error():
    with og.Graph().as_default():
        v = og.Variable(og.zeros([2]) + 1.0, name="v")
        with og.Session() as sess:
            with pytest.raises(og.errors.FailedPreconditionError,
                               match="uninitialized value v") as info:
                sess.run(v)
            assert isinstance(info.value, og.errors.ExecutionError)


def test_bad_arguments_are_type_errors():
    with og.Graph().as_default():
        v = og.Variable(og.zeros([2]), name="v")
        for bad in (v, "v", 3, [v, og.constant(1.0)]):
            with pytest.raises(TypeError, match="var_list"):
                og.report_uninitialized_variables(bad)
            with pytest.raises(TypeError, match="var_list"):
                og.assert_variables_initialized(bad)
        with pytest.raises(TypeError, match="og.Variable"):
            og.is_variable_initialized(og.constant(1.0))

"""og.Variable, og.get_variable, og.get_local_variable and og.variable_scope with TF1's
full argument lists (regularizer, custom_getter, constraint, validate_shape, shape,
synchronization / aggregation, ...), against TF1's recorded behaviour
(tools/record_tf_variable_args.py runs tests/train/variable_args_cases.py under
tf.compat.v1; data/tf1_variable_args_reference.json), plus og's own refusals."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import onegraph as og

from . import variable_args_cases as cases

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                  "tf1_variable_args_reference.json")))


@pytest.mark.parametrize("name", cases.CASES)
def test_agrees_with_tf1(name):
    assert cases.run(og, name) == REF[name]


def test_third_positional_is_collections_or_the_old_name():
    # TF1's Variable(initial_value, trainable, collections); og's older third
    # positional argument was the name, kept for a str
    with og.Graph().as_default():
        a = og.Variable([1.0], True, ["mine"])
        b = og.Variable([2.0], False, "bee")
        assert og.get_collection("mine") == [a]
        assert a in og.trainable_variables() and a not in og.global_variables()
        assert b.name == "bee" and b in og.global_variables()
        assert b not in og.trainable_variables()


def test_partitioner_and_variable_def_are_refused_by_name():
    with og.Graph().as_default():
        with pytest.raises(og.errors.UnimplementedError, match="partitioner"):
            og.get_variable("w", [4, 2], partitioner=lambda shape, dtype: [2, 1])
        with og.variable_scope("s", partitioner=lambda shape, dtype: [2, 1]):
            with pytest.raises(og.errors.UnimplementedError, match="partitioner"):
                og.get_variable("w", [4, 2])
        for key in ("variable_def", "import_scope"):
            with pytest.raises(og.errors.UnimplementedError, match=key):
                og.Variable([1.0], **{key: "x"})


def test_constraint_is_kept_for_the_optimizer():
    with og.Graph().as_default():
        def clip(x):
            return og.clip_by_value(x, 0.0, 1.0)

        v = og.get_variable("w", initializer=np.float32([2.0, -1.0]), constraint=clip)
        with og.Session() as sess:
            assert sess.run(v.assign(v.constraint(v))).tolist() == [1.0, 0.0]
        with pytest.raises(ValueError, match="constraint"):
            og.Variable([1.0], constraint=3)


def test_validate_shape_false_emits_assigns_that_accept_new_shapes():
    with og.Graph().as_default():
        v = og.Variable(np.zeros([3], np.float32), validate_shape=False, shape=[None])
        with og.Session() as sess:
            assert sess.run(v.assign(np.ones([5], np.float32))).shape == (5,)
            assert sess.run(v).shape == (5,)
        w = og.Variable(np.zeros([3], np.float32), shape=[None])
        with og.Session() as sess:
            with pytest.raises(og.OneGraphError):
                sess.run(w.assign(np.ones([5], np.float32)))


def test_bad_arguments_are_named():
    with og.Graph().as_default():
        with pytest.raises(TypeError, match="validate_shape"):
            og.Variable([1.0], validate_shape="no")
        with pytest.raises(ValueError, match="synchronization"):
            og.get_variable("w", [1], synchronization="sometimes")
        with pytest.raises(ValueError, match="aggregation"):
            og.Variable([1.0], aggregation=9)
        with pytest.raises(ValueError, match="custom_getter"):
            og.get_variable("v", [1], custom_getter=1)

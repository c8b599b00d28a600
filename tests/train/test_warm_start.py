"""og.train.init_from_checkpoint and og.train.warm_start against TensorFlow's.

The scenarios (tests/train/warm_start_cases.py) ran under tf.compat.v1 on the TF-written
"basic" checkpoint; tools/record_tf_warm_start.py stored each one's variable values, or
that it raised, in data/tf1_warm_start_reference.json. Here the same scenarios run
under onegraph and must give the same values, or raise. The rest checks what only
onegraph has to say: og-written checkpoints, the error types and that a failed call
changes nothing.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import onegraph as og
from onegraph.train.checkpoint_utils import CheckpointNotFoundError

from . import warm_start_cases as cases

DATA = os.path.join(os.path.dirname(__file__), "data")
with open(os.path.join(DATA, "tf1_warm_start_reference.json")) as _f:
    REFERENCE = json.load(_f)
_EXPECTED = np.load(os.path.join(DATA, "tf_checkpoints", "expected.npz"),
                    allow_pickle=False)
TF_CKPT = os.path.join(DATA, "tf_checkpoints", "basic", str(_EXPECTED["prefix/basic"], "utf-8"))


@pytest.mark.parametrize("scenario", cases.SCENARIOS, ids=lambda s: s.__name__)
def test_scenario_matches_tensorflow(scenario):
    want = REFERENCE[scenario.__name__]
    got = cases.outcome(og, scenario, TF_CKPT)
    if "error" in want:
        assert "error" in got, f"TF raised {want['type']}; onegraph gave {got}"
        # TF's dtype mismatch fails when the initializer runs; onegraph refuses the call
        assert got["type"] == "ValueError"
        return
    assert "values" in got, f"onegraph raised {got.get('type')}; TF gave {want}"
    assert sorted(got["values"]) == sorted(want["values"])
    for name, value in want["values"].items():
        mine = np.asarray(got["values"][name])
        np.testing.assert_array_equal(mine, np.asarray(value, dtype=mine.dtype), err_msg=name)


def _saved_og_checkpoint(tmp_path):
    """An og Saver checkpoint of w (2, 2) = [[1, 2], [3, 4]] and b (2,) = [5, 6] under
    scope "old"; returns its directory."""
    with og.Graph().as_default():
        with og.variable_scope("old"):
            w = og.get_variable("w", initializer=np.array([[1.0, 2.0], [3.0, 4.0]],
                                                          np.float32))
            og.get_variable("b", initializer=np.array([5.0, 6.0], np.float32))
        step = og.assign_add(w, np.ones((2, 2), np.float32))
        with og.Session() as sess:
            sess.run(og.global_variables_initializer())
            sess.run(step)
            og.train.Saver().save(sess, str(tmp_path), global_step=1)
    return str(tmp_path)


def _new_variables():
    with og.variable_scope("new"):
        w = og.get_variable("w", shape=[2, 2], initializer=og.zeros_initializer())
        b = og.get_variable("b", shape=[2], initializer=og.zeros_initializer())
    return w, b


def test_og_checkpoint_directory_scope_to_scope(tmp_path):
    directory = _saved_og_checkpoint(tmp_path)
    with og.Graph().as_default():
        w, b = _new_variables()
        og.train.init_from_checkpoint(directory, {"old/": "new/"})
        with og.Session() as sess:
            sess.run(og.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(w), [[2, 3], [4, 5]])
            np.testing.assert_array_equal(sess.run(b), [5, 6])


def test_initializer_and_initial_value_are_replaced(tmp_path):
    directory = _saved_og_checkpoint(tmp_path)
    with og.Graph().as_default() as g:
        w, b = _new_variables()
        og.train.init_from_checkpoint(directory, {"old/w": w})
        with og.Session() as sess:
            sess.run(w.initializer)  # the variable's own initializer loads it
            np.testing.assert_array_equal(sess.run(w), [[2, 3], [4, 5]])
            np.testing.assert_array_equal(sess.run(w.initial_value), [[2, 3], [4, 5]])
            sess.run(og.variables_initializer([b]))
            np.testing.assert_array_equal(sess.run(b), [0, 0])
        # a model saved from the graph initializes w from the checkpoint's value
        assert w.initializer.name in g.to_model().metadata["initializer"].split(",")


def test_failed_call_changes_no_initializer(tmp_path):
    directory = _saved_og_checkpoint(tmp_path)
    with og.Graph().as_default():
        w, b = _new_variables()
        before = (w.initializer, b.initializer)
        # "old/b" sorts first and is fine; "old/zzz" is missing: neither changes
        with pytest.raises(ValueError, match="old/zzz is not found"):
            og.train.init_from_checkpoint(directory, {"old/b": b, "old/zzz": w})
        assert (w.initializer, b.initializer) == before


def test_errors_are_named(tmp_path):
    with og.Graph().as_default():
        w, _ = _new_variables()
        with pytest.raises(CheckpointNotFoundError):
            og.train.init_from_checkpoint(str(tmp_path / "none"), {"a": w})
        with pytest.raises(TypeError, match="assignment_map"):
            og.train.init_from_checkpoint(TF_CKPT, "f32")
        with pytest.raises(TypeError, match="assignment_map"):
            og.train.init_from_checkpoint(TF_CKPT, {"f32": 3})
        with pytest.raises(ValueError, match=r"Shape of variable new/w \(\(2, 2\)\)"):
            og.train.init_from_checkpoint(TF_CKPT, {"f32": w})
        with pytest.raises(NotImplementedError, match="vocab"):
            og.train.warm_start(TF_CKPT, var_name_to_vocab_info={"new/w": object()})
        with pytest.raises(ValueError, match="must be a `list` or `str`"):
            og.train.warm_start(TF_CKPT, 3)


def test_warm_start_from_og_checkpoint_with_rename(tmp_path):
    directory = _saved_og_checkpoint(tmp_path)
    with og.Graph().as_default():
        w, b = _new_variables()
        og.train.warm_start(directory, "new/", var_name_to_prev_var_name={
            "new/w": "old/w", "new/b": "old/b"})
        with og.Session() as sess:
            sess.run(og.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(w), [[2, 3], [4, 5]])
            np.testing.assert_array_equal(sess.run(b), [5, 6])

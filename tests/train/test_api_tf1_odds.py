"""TF1's small top-level functions (train/api_tf1_odds.py) and og.nest (train/nest.py)
against TensorFlow 2.21's values for the same scenarios (tests/train/tf1_odds_cases.py,
recorded by tools/record_tf_odds.py into data/tf1_odds_reference.json)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import onegraph as og

from .tf1_odds_cases import SAME_STRUCTURE, nest_results, tensors

with open(os.path.join(os.path.dirname(__file__), "data", "tf1_odds_reference.json")) as _f:
    REF = json.load(_f)


def test_every_recorded_scenario_is_built():
    with og.Graph().as_default():
        assert set(tensors(og)) == set(REF["tensors"])


@pytest.mark.parametrize("name", sorted(REF["tensors"]))
def test_values_match_tf(name):
    ref = REF["tensors"][name]
    with og.Graph().as_default():
        t = tensors(og)[name]
        assert (None if t.shape is None else list(t.shape)) == ref["static_shape"]
        with og.Session() as sess:
            got = np.asarray(sess.run(t))
    assert got.dtype.name == ref["dtype"] and list(got.shape) == ref["shape"]
    want = np.asarray(ref["values"], dtype=got.dtype).reshape(ref["shape"])
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)


def test_nest_matches_tf():
    assert nest_results(og) == REF["nest"]
    for name, (a, b, check) in SAME_STRUCTURE.items():
        want = REF["same_structure"][name]
        if want is None:
            og.nest.assert_same_structure(a, b, check_types=check)
        else:
            with pytest.raises({"ValueError": ValueError, "TypeError": TypeError}[want]):
                og.nest.assert_same_structure(a, b, check_types=check)


def test_switches_and_errors():
    og.disable_eager_execution()
    og.disable_v2_behavior()
    assert og.executing_eagerly() is False and og.VERSION == og.__version__
    with og.Graph().as_default():
        with pytest.raises(ValueError, match="can only be scalar or vector"):
            og.unravel_index(og.constant(np.zeros([2, 2], np.int32)), [2, 2])
        with pytest.raises(TypeError, match="Expected x to be numeric"):
            og.is_non_decreasing(og.constant(["a", "b"]))
        # TF's answers: constants and shapes known while building, else None
        assert og.get_static_value(og.constant([1, 2])).tolist() == [1, 2]
        assert og.get_static_value(og.shape(og.placeholder(og.float32, [2, 3]))).tolist() \
            == [2, 3]
        assert og.get_static_value(og.placeholder(og.float32)) is None
        assert og.is_numeric_tensor(og.constant(1.0))
        assert not og.is_numeric_tensor(og.constant("a"))
        with og.colocate_with(og.constant(1.0)):
            pass
    with pytest.raises(ValueError, match="Could not pack sequence"):
        og.nest.pack_sequence_as([1, 2], [1])

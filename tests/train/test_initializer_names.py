"""tf.initializers' short names, the identity initializer and
uniform_unit_scaling_initializer, against TF 2.21's recorded values
(tools/record_tf_initializer_names.py; data/tf1_initializer_names_reference.json)."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

import onegraph as og

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                  "tf1_initializer_names_reference.json")))


@pytest.mark.parametrize("name", sorted(REF["short_names"]))
def test_short_names_are_tfs_classes(name):
    assert getattr(og.initializers, name).__name__ == REF["short_names"][name]


@pytest.mark.parametrize("key", sorted(REF["identity"]))
def test_identity_values(key):
    shape, gain, dtype = key.split("-")
    value = og.initializers.identity(gain=float(gain))(json.loads(shape), dtype=dtype)
    want = REF["identity"][key]
    assert str(value.dtype) == want["dtype"]
    np.testing.assert_array_equal(value, want["value"])


def test_identity_is_2d_only_and_builds_a_variable():
    with pytest.raises(ValueError, match="2D"):
        og.initializers.identity()([2, 2, 2])
    with pytest.raises(ValueError):
        og.initializers.identity(dtype=og.int32)
    with og.Graph().as_default():
        v = og.get_variable("w", [2, 3], initializer=og.initializers.identity(gain=3.0))
        with og.Session() as sess:
            sess.run(og.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(v), 3.0 * np.eye(2, 3))


@pytest.mark.parametrize("case", REF["unit_scaling"], ids=lambda c: str(c["shape"]))
def test_uniform_unit_scaling_bound_matches_tfs_draws(case):
    shape, factor = case["shape"], case["factor"]
    value = og.uniform_unit_scaling_initializer(factor=factor, seed=7)(shape)
    assert str(value.dtype) == case["dtype"] and list(value.shape) == shape
    # TF's largest |draw| lies just below the bound; og's draws stay below the same
    # bound and come as close to it
    bound = np.abs(value).max()
    assert bound < case["max_abs"] * 1.01 and bound > case["max_abs"] * 0.97
    limit = factor * math.sqrt(3.0 / max(1, math.prod(shape[:-1])))
    assert case["max_abs"] <= limit and np.abs(value).max() <= limit
    assert abs(value.mean()) < 0.05 * limit


def test_uniform_unit_scaling_arguments():
    with pytest.raises(TypeError, match="factor"):
        og.uniform_unit_scaling_initializer(factor="big")
    with pytest.raises(ValueError):
        og.uniform_unit_scaling_initializer(seed=-1)
    a = og.initializers.uniform_unit_scaling(seed=3)([4, 5])
    b = og.initializers.uniform_unit_scaling(seed=3)([4, 5])
    np.testing.assert_array_equal(a, b)

"""og.sets against TensorFlow.

The code of sets_cases.py ran under tf.compat.v1; tools/record_tf_sets.py stored its
results (values, static shapes and dtypes, or the error class and TF's message) in
data/tf1_sets_reference.json. The same code runs here under onegraph and must give
the same results, raise the same class at the same stage (build or run) and, for
ValueError and InvalidArgumentError, carry TF's message.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import onegraph as og
from onegraph.train import api_sets

from . import sets_cases as cases

with open(os.path.join(os.path.dirname(__file__), "data", "tf1_sets_reference.json")) as _f:
    REFERENCE = json.load(_f)


class _Og:
    """onegraph as the cases see it: og, with og.sets (api_sets.sets until exported)."""

    sets = getattr(og, "sets", api_sets.sets)

    def __getattr__(self, name):
        return getattr(og, name)


OG = _Og()


def _same(mine, theirs, where: str) -> None:
    if isinstance(theirs, dict):
        assert isinstance(mine, dict) and sorted(mine) == sorted(theirs), (where, mine)
        for key in theirs:
            _same(mine[key], theirs[key], f"{where}.{key}")
        return
    if theirs is None or isinstance(theirs, str):
        assert mine == theirs, (where, mine, theirs)
        return
    assert mine == theirs, (where, mine, theirs)  # lists: values, dims, strings exactly


@pytest.mark.parametrize("case", sorted(cases.CASES))
def test_case_matches_tensorflow(case):
    want = REFERENCE[case]
    got = cases.run(OG, case)
    if "error" in want:
        assert "error" in got, f"TF raised {want}; onegraph gave {got}"
        assert (got["error"], got["stage"]) == (want["error"], want["stage"]), (got, want)
        if want["error"] in ("ValueError", "InvalidArgumentError"):
            assert want["message"] in got["message"], (got, want)
        else:  # TypeError: TF's text up to where it prints its own dtype objects
            head = want["message"].split("`")[0].split("<")[0]
            assert got["message"].startswith(head), (got, want)
        return
    assert "error" not in got, f"onegraph raised {got}"
    _same(got, want, case)


def test_reference_covers_every_case():
    assert sorted(REFERENCE) == sorted(cases.CASES)


def test_no_gradient_through_set_ops():
    with og.Graph().as_default():
        x = og.placeholder(og.float32, [2, 2])
        ids = og.cast(x, og.int32)
        out = api_sets.sets.union(ids, ids)
        y = og.reduce_sum(og.cast(out.values, og.float32)) + og.reduce_sum(
            og.cast(api_sets.sets.size(out), og.float32))
        assert og.gradients(y, [x]) == [None]


def test_namespace_names():
    names = {"set_size", "size", "set_intersection", "intersection", "set_union", "union",
             "set_difference", "difference"}
    assert set(api_sets.sets.__all__) == names
    assert api_sets.sets.__name__ == "onegraph.sets"


def test_strings_keep_their_length():
    with og.Graph().as_default():
        a = og.constant(np.array([["a", "b"]]))
        b = og.constant(np.array([["longer", "b"]]))
        with og.Session() as sess:
            got = sess.run(api_sets.sets.union(a, b))
    assert list(got.values) == ["a", "b", "longer"]

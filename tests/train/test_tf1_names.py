"""og.space_to_batch, required_space_to_batch_paddings, matrix_square_root,
batch_scatter_update, dimension_at_index, get_seed, grad_pass_through, guarantee_const,
init_scope, container and recompute_grad against TF 2.21's recorded values
(tools/record_tf_names.py runs tests/train/tf1_names_cases.py under tf.compat.v1)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import onegraph as og

from . import tf1_names_cases as cases
from .tf1_reference import same_nested

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                  "tf1_names_reference.json")))


@pytest.mark.parametrize("name", cases.CASES)
def test_agrees_with_tf1(name):
    got, want = cases.run(og, name), REF[name]
    if name in ("dimension_at_index", "get_seed", "init_scope"):
        assert got == want
    else:
        _close(got, want, name)


def _close(got, want, where):
    """Nested lists of values of different shapes: each array to 1e-5."""
    if isinstance(want, list) and want and isinstance(want[0], list):
        try:
            np.asarray(want, float)
        except ValueError:   # ragged: arrays of different shapes side by side
            assert isinstance(got, list) and len(got) == len(want), where
            for k, (a, b) in enumerate(zip(got, want)):
                _close(a, b, f"{where}[{k}]")
            return
    same_nested(got, want, where, rtol=1e-5, atol=1e-6)


def test_conv2d_backprop_v2_forms_take_the_tensors_for_their_sizes():
    # TF's CPU build has no Conv2DBackprop*V2 kernels: og's v2 forms equal the v1 ones
    # (checked against TF elsewhere) given the tensors' shapes
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5, 6, 3)).astype(np.float32)
    f = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    dy = rng.standard_normal((2, 5, 6, 4)).astype(np.float32)
    with og.Graph().as_default():
        args = ([1, 1, 1, 1], "SAME")
        got = [og.conv2d_backprop_filter_v2(x, f, dy, *args),
               og.conv2d_backprop_input_v2(x, f, dy, *args)]
        want = [og.nn.conv2d_backprop_filter(x, list(f.shape), dy, *args),
                og.nn.conv2d_backprop_input(list(x.shape), f, dy, *args)]
        with og.Session() as sess:
            for a, b in zip(sess.run(got), sess.run(want)):
                np.testing.assert_array_equal(a, b)


def test_argument_errors():
    with og.Graph().as_default():
        x = og.zeros([1, 4, 4, 1])
        with pytest.raises(TypeError, match="block_size"):
            og.space_to_batch(x, [[0, 0], [0, 0]])
        with pytest.raises(ValueError, match="rank"):
            og.batch_scatter_update(og.Variable(np.zeros(3, np.float32)),
                                    og.placeholder(og.int32, None), [1.0])
    with pytest.raises(TypeError, match="container_name"):
        with og.container(3):
            pass

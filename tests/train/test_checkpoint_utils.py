"""og.train's checkpoint readers (list_variables, load_variable, load_checkpoint,
NewCheckpointReader, checkpoint_exists, get_checkpoint_mtimes) on checkpoints a Saver
wrote, and on missing and damaged ones."""

import os

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import DataLossError, OneGraphError


@pytest.fixture()
def saved(tmp_path):
    """A directory with two checkpoints of w (3, 2) float32 and step (int64)."""
    g = og.Graph()
    with g.as_default():
        w = og.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="layer/w")
        step = og.Variable(np.int64(7), name="step")
        bump = w.assign_add(np.ones((3, 2), np.float32))
        saver = og.train.Saver()
        with og.Session(g) as sess:
            sess.run(og.global_variables_initializer())
            first = saver.save(sess, str(tmp_path), global_step=1)
            sess.run(bump)
            second = saver.save(sess, str(tmp_path), global_step=2)
    del step
    return tmp_path, first, second


def test_readers_give_the_saved_values(saved):
    directory, first, second = saved
    assert og.train.list_variables(str(directory)) == [("layer/w", [3, 2]), ("step", [])]
    np.testing.assert_array_equal(og.train.load_variable(str(directory), "layer/w:0"),
                                  np.arange(6).reshape(3, 2) + 1)
    np.testing.assert_array_equal(og.train.load_variable(first, "layer/w"),
                                  np.arange(6).reshape(3, 2))
    reader = og.train.NewCheckpointReader(second)
    assert reader.has_tensor("step") and not reader.has_tensor("nothing")
    assert reader.get_tensor("step") == 7 and reader.get_tensor("step").dtype == np.int64
    assert reader.get_variable_to_dtype_map() == {"layer/w": og.float32, "step": og.int64}
    value = reader.get_tensor("layer/w")
    value[:] = 0   # a copy: the reader keeps its own
    assert reader.get_tensor("layer/w")[0, 1] == 2
    assert og.train.checkpoint_exists(first) and og.train.checkpoint_exists(str(directory))
    mtimes = og.train.get_checkpoint_mtimes([first, str(directory / "gone.og"), second])
    assert len(mtimes) == 2 and mtimes[0] <= mtimes[1]


def test_missing_and_damaged_checkpoints_are_named(saved, tmp_path_factory):
    directory, first, _ = saved
    with pytest.raises(OneGraphError, match="Key nothing not found in checkpoint"):
        og.train.load_variable(first, "nothing")
    empty = tmp_path_factory.mktemp("empty")
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        og.train.list_variables(str(empty))
    assert not og.train.checkpoint_exists(str(empty))
    assert not og.train.checkpoint_exists(str(empty / "nope.og"))
    with pytest.raises(FileNotFoundError, match="nope.og"):
        og.train.load_checkpoint(str(empty / "nope.og"))
    data = bytearray(open(first, "rb").read())
    at = bytes(data).find(np.arange(6, dtype=np.float32).tobytes())   # w's stored value
    assert at > 0
    data[at + 5] ^= 0xFF
    damaged = os.path.join(str(empty), "ckpt-9.og")
    with open(damaged, "wb") as f:
        f.write(bytes(data))
    with pytest.raises(DataLossError, match="ckpt-9.og"):
        og.train.load_checkpoint(damaged)


def test_checkpoint_state_iterator_and_removal(saved, tmp_path_factory):
    directory, first, second = saved
    state = og.train.get_checkpoint_state(str(directory))
    assert state.model_checkpoint_path == second
    assert state.all_model_checkpoint_paths == [first, second]
    assert og.train.get_checkpoint_state(str(tmp_path_factory.mktemp("none"))) is None
    timeouts = []
    seen = list(og.train.checkpoints_iterator(str(directory), timeout=0.05,
                                              timeout_fn=lambda: timeouts.append(1),
                                              poll_secs=0.01))
    assert seen == [second] and timeouts == [1]
    og.train.remove_checkpoint(second)
    og.train.remove_checkpoint(second)   # gone already: not an error
    assert not os.path.exists(second)
    assert og.train.latest_checkpoint(str(directory)) == first
    # a timeout_fn returning False keeps waiting: a checkpoint written meanwhile comes
    calls = []

    def write_one():
        calls.append(1)
        if len(calls) == 2:
            with open(second, "wb") as f:
                f.write(open(first, "rb").read())
        return len(calls) >= 3 or False

    seen = list(og.train.checkpoints_iterator(str(directory), timeout=0.02,
                                              timeout_fn=write_one, poll_secs=0.005))
    assert seen == [first, second]

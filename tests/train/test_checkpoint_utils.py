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


# ------------------------------------------------------------ fuzz findings (bad paths)

def test_load_checkpoint_of_none_is_tf1s_error_named():
    # os.fspath(None) raised a raw TypeError; TF1 says it found no checkpoint
    from onegraph.train.checkpoint_utils import CheckpointNotFoundError, NotFoundError

    for reader in (og.train.load_checkpoint, og.train.list_variables,
                   og.train.NewCheckpointReader, lambda p: og.train.load_variable(p, "w")):
        with pytest.raises(CheckpointNotFoundError, match="Couldn't find 'checkpoint' file "
                                                          "or checkpoints in given directory "
                                                          "None") as caught:
            reader(None)
        # one named error, and still what this module raised before (and TF1's type)
        assert isinstance(caught.value, (NotFoundError, OneGraphError, ValueError,
                                         FileNotFoundError))
    assert not og.train.checkpoint_exists(None)


@pytest.mark.parametrize("call", [
    lambda p: og.train.load_checkpoint(p), lambda p: og.train.get_checkpoint_state(p),
    lambda p: og.train.checkpoint_exists(p), lambda p: og.train.get_checkpoint_mtimes([p]),
    lambda p: list(og.train.checkpoints_iterator(p, timeout=0)),
    lambda p: og.train.remove_checkpoint(p), lambda p: og.train.CheckpointReader(p),
], ids=["load_checkpoint", "get_checkpoint_state", "checkpoint_exists",
        "get_checkpoint_mtimes", "checkpoints_iterator", "remove_checkpoint",
        "CheckpointReader"])
def test_an_argument_that_is_no_path_is_a_named_type_error(call):
    with pytest.raises(TypeError, match="a checkpoint path must be a str, bytes or "
                                        "os.PathLike, got int 3"):
        call(3)


def test_bytes_paths_read_as_str_paths(saved):
    directory, first, _ = saved
    assert og.train.list_variables(os.fsencode(str(directory))) == [("layer/w", [3, 2]),
                                                                     ("step", [])]
    assert og.train.checkpoint_exists(os.fsencode(first))


def test_every_damaged_checkpoint_is_a_named_error_naming_the_path(saved, tmp_path_factory):
    from onegraph.train.checkpoint_utils import CheckpointNotFoundError, NotFoundError

    directory, first, _ = saved
    data = open(first, "rb").read()
    bad = tmp_path_factory.mktemp("bad")
    rng = np.random.RandomState(0)
    variants = {"empty": b"", "garbage": rng.bytes(len(data)), "pickle": b"\x80\x04N." * 8}
    variants.update({f"cut{n}": data[:n] for n in (4, 16, len(data) // 2, len(data) - 1)})
    for k in range(40):
        flipped = bytearray(data)
        flipped[rng.randint(len(data))] ^= 1 << rng.randint(8)
        variants[f"flip{k}"] = bytes(flipped)
    for name, blob in variants.items():
        path = str(bad / f"{name}.og")
        with open(path, "wb") as f:
            f.write(blob)
        try:
            values = dict((n, og.train.load_variable(path, n))
                          for n, _ in og.train.list_variables(path))
        except DataLossError as e:
            assert path in str(e), (name, str(e))
        else:    # a flip in padding or unused bytes: then the values are all intact
            np.testing.assert_array_equal(values["layer/w"], np.arange(6).reshape(3, 2))
            assert values["step"] == 7
    with pytest.raises(NotFoundError, match=f"Key nothing not found in checkpoint {first}"):
        og.train.load_checkpoint(first).get_tensor("nothing")
    missing = str(bad / "gone" / "ckpt-1.og")
    with pytest.raises(CheckpointNotFoundError, match="no checkpoint file or directory "
                                                      + missing):
        og.train.load_variable(missing, "step")


def test_an_index_naming_a_missing_file_or_nested_too_deep(tmp_path):
    from onegraph.train.checkpoint_utils import CheckpointNotFoundError

    gone = tmp_path / "gone"
    gone.mkdir()
    (gone / "checkpoint.json").write_text('{"latest": "ckpt-5.og", "all": ["ckpt-5.og"]}')
    with pytest.raises(CheckpointNotFoundError, match=f"given directory {gone}"):
        og.train.load_checkpoint(str(gone))
    deep = tmp_path / "deep"
    deep.mkdir()
    # json's recursive parser raised a raw RecursionError
    (deep / "checkpoint.json").write_text("[" * 100000 + "]" * 100000)
    for call in (og.train.load_checkpoint, og.train.checkpoint_exists,
                 og.train.get_checkpoint_state,
                 lambda p: list(og.train.checkpoints_iterator(p, timeout=0))):
        with pytest.raises(DataLossError,
                           match=f"checkpoint index {deep}.*unreadable: maximum recursion"):
            call(str(deep))

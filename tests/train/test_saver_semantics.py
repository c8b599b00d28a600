"""`train.Saver` against TF1's `tf.compat.v1.train.Saver`: what a restore checks before
it assigns anything, which files a save may touch, the checkpoint index, argument errors,
concurrent savers and the temp files of killed saves."""

import gc
import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import onegraph as og
from onegraph.cli import main
from onegraph.errors import DataLossError, ExecutionError, OneGraphError, ShapeError
from onegraph.format import DType, TensorKind
from onegraph.format import Graph as IRGraph
from onegraph.ops.checkpoint import read_checkpoint, write_checkpoint
from onegraph.train.saver import Saver, checkpoints, latest_checkpoint

from ..trainable import save_linear_trainable

REPO_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def _graph(variables: dict):
    """A graph holding one Variable per {name: initial value}; returns (graph, {name: var})."""
    g = og.Graph()
    with g.as_default():
        vs = {name: og.Variable(value, name=name) for name, value in variables.items()}
    return g, vs


def _counter():
    """A graph with a float32[3] variable `a` and an op adding 1 to it."""
    g = og.Graph()
    with g.as_default():
        a = og.Variable(np.zeros(3, np.float32), name="a")
        inc = a.assign_add(np.ones(3, np.float32))
    return g, a, inc


def _flip(path, offset=-60):
    """Corrupt a checkpoint inside its CRC-guarded data tail."""
    raw = bytearray(open(path, "rb").read())
    raw[offset] ^= 0xFF
    with open(path, "wb") as f:
        f.write(raw)


def _index(directory):
    with open(os.path.join(directory, "checkpoint.json")) as f:
        return json.load(f)


# -- 1, 2, 3, 5: a restore checks names, dtypes and shapes before assigning anything --------

@pytest.mark.parametrize("saved, declared", [
    (np.array([1.7, -2.5, 1e10]), np.zeros(3, np.int32)),        # no silent float64 -> int32
    (np.array([1.0, 2.0], np.float32), np.zeros(2, np.float64)),  # nor a widening
    (np.array(["a", "b"], dtype=object), np.zeros(2, np.float32)),
])
def test_restore_refuses_a_value_of_another_dtype(tmp_path, saved, declared):
    # TF1 RestoreV2: "tensor_name = w; expected dtype int32 does not equal original
    # dtype double" (InvalidArgument, not DataLoss)
    g, _ = _graph({"w": saved})
    path = Saver().save(og.Session(g), str(tmp_path))
    g2, v2 = _graph({"w": declared})
    sess = og.Session(g2)
    with pytest.raises(ShapeError) as e:
        Saver().restore(sess, path)
    message = str(e.value)
    want = og.DType.from_numpy(declared.dtype).short_name
    found = og.DType.from_numpy(saved.dtype).short_name
    for word in ("'w'", path, want, found):
        assert word in message, (word, message)
    np.testing.assert_array_equal(sess.run(v2["w"]), declared)


@pytest.mark.parametrize("saved", [np.arange(5, dtype=np.float32),       # shape
                                   np.arange(3, dtype=np.float64)])      # dtype
def test_restore_checks_the_declared_type_of_an_uninitialised_variable(tmp_path, saved):
    # TF1 restores with Assign(validate_shape=True) against the variable's static shape,
    # even into a fresh variable: "Assign requires shapes of both tensors to match"
    g, _ = _graph({"a": saved})
    wrong = Saver().save(og.Session(g), str(tmp_path / "wrong"))
    g2 = og.Graph()
    with g2.as_default():
        a = og.Variable(og.zeros([3], og.float32), name="a")  # no value until initialised
    sess = og.Session(g2)
    with pytest.raises(ShapeError, match=r"'a'.*float32.*\(3,\)"):
        Saver().restore(sess, wrong)
    with pytest.raises(ExecutionError, match="before it is initialised"):
        sess.run(a)
    g3, _ = _graph({"a": np.array([1, 2, 3], np.float32)})
    right = Saver().save(og.Session(g3), str(tmp_path / "right"))
    assert Saver().restore(sess, right) == right
    value = sess.run(a)
    assert value.dtype == np.float32
    np.testing.assert_array_equal(value, [1, 2, 3])


def test_unknown_dims_of_the_declared_shape_match_any_size(tmp_path):
    ir = IRGraph("m")
    ir.add_tensor("v", DType.FLOAT32, (-1, 2), TensorKind.VARIABLE)
    sess = og.Session(ir)
    ok, rank, dtype = (str(tmp_path / n) for n in ("ok.og", "rank.og", "dtype.og"))
    write_checkpoint(ok, [("v", np.arange(10, dtype=np.float32).reshape(5, 2))])
    write_checkpoint(rank, [("v", np.zeros((5, 3), np.float32))])
    write_checkpoint(dtype, [("v", np.zeros((5, 2), np.float64))])
    saver = Saver()
    for bad in (rank, dtype):
        with pytest.raises(ShapeError, match="'v'"):
            saver.restore(sess, bad)
    assert saver.restore(sess, ok) == ok
    np.testing.assert_array_equal(sess.run("v"), np.arange(10).reshape(5, 2))


def test_an_incompatible_checkpoint_changes_nothing_and_is_not_data_loss(tmp_path):
    g, _ = _graph({"a": np.full(3, 9.0), "b": np.ones((2, 2))})
    path = Saver().save(og.Session(g), str(tmp_path), global_step=1)
    g2, v2 = _graph({"a": np.zeros(3), "b": np.zeros(5)})      # the model changed: b is [5]
    sess = og.Session(g2)
    with pytest.raises(ShapeError, match=r"'b'.*\(5,\).*\(2, 2\)"):
        Saver().restore(sess, path)
    np.testing.assert_array_equal(sess.run(v2["a"]), np.zeros(3))   # not half applied
    g3, v3 = _graph({"a": np.zeros(3), "c": np.zeros(2)})       # a variable the file lacks
    sess3 = og.Session(g3)
    with pytest.raises(OneGraphError, match=r"lacks.*'c'") as e:
        Saver().restore(sess3, path)
    assert not isinstance(e.value, DataLossError)
    np.testing.assert_array_equal(sess3.run(v3["a"]), np.zeros(3))


def test_fallback_does_not_skip_an_incompatible_checkpoint(tmp_path):
    # fallback=True is for corrupted files; an intact checkpoint of another model is an
    # error to report, not a reason to restore an older one
    g, vs = _graph({"a": np.zeros(3)})
    Saver().save(og.Session(g), str(tmp_path), global_step=1)
    g_new, _ = _graph({"a": np.zeros(5)})
    Saver().save(og.Session(g_new), str(tmp_path), global_step=2)
    sess = og.Session(g)
    with pytest.raises(ShapeError, match="ckpt-2.og"):
        Saver().restore(sess, str(tmp_path), fallback=True)


def _flatbuffer_flips(path):
    """(position, bit, damaged bytes) for every single-bit flip of the FlatBuffer part."""
    raw = open(path, "rb").read()
    end = og.load(path).file_info["flatbuffer_size"]
    for pos in range(end):
        for bit in range(8):
            bad = bytearray(raw)
            bad[pos] ^= 1 << bit
            yield pos, bit, bytes(bad)


def test_a_flipped_dtype_bit_in_the_header_is_data_loss(tmp_path):
    # the saver doc: "a corrupted or truncated file raises DataLossError"
    g, vs = _graph({"w": np.full((2, 2), 2.5, np.float32)})
    saver = Saver()
    path = saver.save(og.Session(g), str(tmp_path), global_step=1)
    for pos, bit, bad in _flatbuffer_flips(path):     # FLOAT32 (1) -> INT32 (9): same size
        if bit != 3:
            continue
        with open(path, "wb") as f:
            f.write(bad)
        try:
            m = og.load(path, check_data=True)
        except OneGraphError:
            continue
        if m.graph.tensors and m.graph.tensors[0].dtype is DType.INT32:
            break
    else:
        pytest.fail("no header bit turns the dtype into INT32")
    sess = og.Session(g)
    with pytest.raises(DataLossError, match="ckpt-1.og"):
        saver.restore(sess, path)


def test_no_single_header_bit_flip_restores_other_values(tmp_path):
    # four same-shaped variables, like a kernel and its Adam slots: a flipped buffer
    # index would hand one variable another's (intact, CRC-correct) data
    g, vs = _graph({f"v{k}": np.full((4, 4), k + 1.0, np.float32) for k in range(4)})
    saver = Saver()
    path = saver.save(og.Session(g), str(tmp_path), global_step=1)
    saved = {t.name: (t.dtype, np.array(t.data)) for t in og.load(path).graph.tensors}
    flipped = str(tmp_path / "flipped.og")
    changed = []
    for pos, bit, bad in _flatbuffer_flips(path):
        with open(flipped, "wb") as f:
            f.write(bad)
        try:
            got = {t.name: (t.dtype, np.array(t.data))
                   for t in og.load(flipped, check_data=True).graph.tensors}
        except OneGraphError:
            continue                                   # detected by the format reader
        if got.keys() == saved.keys() and all(
                got[n][0] is saved[n][0] and got[n][1].dtype == saved[n][1].dtype
                and np.array_equal(got[n][1], saved[n][1]) for n in saved):
            continue                                   # padding: the same checkpoint
        changed.append((pos, bit))
        with pytest.raises(DataLossError, match="flipped.og"):
            saver.restore(og.Session(g), flipped)
    assert changed  # the dtype and buffer-index flips above are among them


# -- 4: var_list as a mapping {checkpoint name: variable}; bad elements ----------------------

def test_var_list_mapping_names_the_checkpoint_keys(tmp_path):
    # TF1: var_list is "a dictionary mapping names to SaveableObjects"; the keys are the
    # names in the checkpoint, the values the variables to save and restore
    g, _ = _graph({"old/w": np.array([1.0, 2.0, 3.0])})
    path = Saver().save(og.Session(g), str(tmp_path / "a"))
    g2 = og.Graph()
    with g2.as_default():
        new_w = og.Variable(np.zeros(3), name="new/w")
        other = og.Variable(np.zeros(3), name="old/w")   # same name as the key, not mapped
    sess = og.Session(g2)
    assert Saver({"old/w": new_w}).restore(sess, path) == path
    np.testing.assert_array_equal(sess.run(new_w), [1, 2, 3])
    np.testing.assert_array_equal(sess.run(other), [0, 0, 0])
    g3, v3 = _graph({"new/w": np.zeros(3)})              # rename only: no 'old/w' at all
    sess3 = og.Session(g3)
    Saver({"old/w": v3["new/w"]}).restore(sess3, path)
    np.testing.assert_array_equal(sess3.run(v3["new/w"]), [1, 2, 3])
    saved = Saver({"renamed": v3["new/w"]}).save(sess3, str(tmp_path / "b"))
    stored = read_checkpoint(saved)
    assert list(stored) == ["renamed"]
    np.testing.assert_array_equal(stored["renamed"], [1, 2, 3])


@pytest.mark.parametrize("make", [
    lambda w: [w.value()],           # a tensor, not a Variable
    lambda w: [w, 3],
    lambda w: {"a": np.zeros(3)},
    lambda w: {1: w},                # keys are checkpoint names: str
    lambda w: "w",                   # a string is not a list of names
])
def test_var_list_elements_that_are_not_variables_are_refused(make):
    g, vs = _graph({"w": np.zeros(3, np.float32)})
    with pytest.raises(TypeError, match="var_list"):
        Saver(make(vs["w"]))


# -- 6, 13: fallback order, and a damaged index ----------------------------------------------

def test_fallback_tries_only_older_checkpoints_newest_first(tmp_path):
    g, a, inc = _counter()
    sess = og.Session(g)
    saver = Saver(max_to_keep=None)
    paths = {}
    for step in (1, 2, 3, 4):
        sess.run(inc)
        paths[step] = saver.save(sess, str(tmp_path), global_step=step)
    _flip(paths[3])
    _flip(paths[2])
    s2 = og.Session(g)
    assert saver.restore(s2, paths[3], fallback=True) == paths[1]
    np.testing.assert_array_equal(s2.run(a), [1, 1, 1])
    _flip(paths[1])
    with pytest.raises(DataLossError, match="ckpt-3.og.*ckpt-2.og.*ckpt-1.og") as e:
        saver.restore(og.Session(g), paths[3], fallback=True)
    assert "ckpt-4.og" not in str(e.value)


def test_a_damaged_index_refuses_the_save_before_writing(tmp_path):
    g, a, inc = _counter()
    sess = og.Session(g)
    saver = Saver()
    first = saver.save(sess, str(tmp_path), global_step=1)
    with open(tmp_path / "checkpoint.json", "w") as f:
        f.write("{truncated")
    with pytest.raises(DataLossError, match="checkpoint.json"):
        saver.save(sess, str(tmp_path), global_step=2)
    # nothing written (hidden files: the index lock)
    assert sorted(p for p in os.listdir(tmp_path) if not p.startswith(".")) == [
        "checkpoint.json", "ckpt-1.og"]
    # an intact file is restored even with fallback on: the index is not needed for it
    assert saver.restore(og.Session(g), first, fallback=True) == first


# -- 7, 12: the index is validated; only the Saver's own files are deleted -------------------

@pytest.mark.parametrize("text", [
    "[]", "null", '"ckpt-1.og"',
    '{"latest": 5, "all": []}',
    '{"latest": "ckpt-1.og", "all": [1]}',
    '{"latest": "ckpt-1.og", "all": "ckpt-1.og"}',
    '{"latest": "ckpt-1.og", "all": ["../victim.txt", "ckpt-1.og"]}',
    '{"latest": "ckpt-1.og", "all": ["ABSOLUTE", "ckpt-1.og"]}',
    '{"latest": "ckpt-1.og", "all": ["sub/ckpt-1.og"]}',
    '{"latest": "..", "all": []}',
    '{"latest": "", "all": []}',
])
def test_an_index_of_the_wrong_shape_is_data_loss(tmp_path, text):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    ck = tmp_path / "ck"
    ck.mkdir()
    (ck / "checkpoint.json").write_text(text.replace("ABSOLUTE", str(victim)))
    g, a, inc = _counter()
    sess = og.Session(g)
    for call in (lambda: latest_checkpoint(str(ck)), lambda: checkpoints(str(ck)),
                 lambda: Saver(max_to_keep=1).save(sess, str(ck), global_step=2)):
        with pytest.raises(DataLossError, match="checkpoint.json"):
            call()
    assert victim.read_text() == "precious\n"
    assert not (ck / "ckpt-2.og").exists()


def test_rotation_deletes_only_files_named_like_the_savers(tmp_path):
    g, a, inc = _counter()
    sess = og.Session(g)
    Saver().save(sess, str(tmp_path), global_step=1)
    (tmp_path / "notes.txt").write_text("keep me")
    index = _index(tmp_path)
    (tmp_path / "checkpoint.json").write_text(json.dumps(
        {"latest": index["latest"], "all": ["notes.txt"] + index["all"]}))
    Saver(max_to_keep=1).save(sess, str(tmp_path), global_step=2)
    assert (tmp_path / "notes.txt").read_text() == "keep me"
    assert not (tmp_path / "ckpt-1.og").exists()
    assert _index(tmp_path) == {"latest": "ckpt-2.og", "all": ["ckpt-2.og"]}


# -- 8: latest_checkpoint ------------------------------------------------------------------------

def test_latest_checkpoint_returns_the_newest_file_that_exists(tmp_path):
    # TF1: "The full path to the latest checkpoint or None if no checkpoint was found"
    g, a, inc = _counter()
    sess = og.Session(g)
    saver = Saver(max_to_keep=None)
    p1 = saver.save(sess, str(tmp_path), global_step=1)
    p2 = saver.save(sess, str(tmp_path), global_step=2)
    os.unlink(p2)
    assert latest_checkpoint(str(tmp_path)) == p1
    os.unlink(p1)
    assert latest_checkpoint(str(tmp_path)) is None


def test_latest_checkpoint_takes_bytes_and_refuses_what_is_not_a_path(tmp_path):
    g, a, inc = _counter()
    p1 = Saver().save(og.Session(g), str(tmp_path), global_step=1)
    assert latest_checkpoint(os.fsencode(tmp_path)) == p1
    assert checkpoints(os.fsencode(tmp_path)) == [p1]
    for bad in (None, 3, ["dir"]):
        with pytest.raises(TypeError, match="latest_checkpoint: the checkpoint directory"):
            latest_checkpoint(bad)


def test_a_deeply_nested_index_is_data_loss_not_a_recursion_error(tmp_path):
    (tmp_path / "checkpoint.json").write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(DataLossError, match="checkpoint.json"):
        latest_checkpoint(str(tmp_path))


@pytest.fixture(scope="module")
def trainable(tmp_path_factory):
    d = tmp_path_factory.mktemp("trainable")
    save_linear_trainable(d / "t.og")
    np.savez(d / "d.npz", x=np.ones((8, 3), np.float32), y=np.ones((8, 1), np.float32))
    return d


def test_train_starts_afresh_when_the_recorded_checkpoint_is_gone(trainable, tmp_path):
    from onegraph.train.cli_commands import train_model

    ck = str(tmp_path / "ck")
    args = (str(trainable / "t.og"), str(trainable / "d.npz"), 3, 4)
    train_model(*args, checkpoint_dir=ck, quiet=True)
    os.unlink(os.path.join(ck, "ckpt-3.og"))
    assert train_model(*args, checkpoint_dir=ck, quiet=True)["start_step"] == 0


def test_cli_train_reports_a_damaged_index_in_one_line(trainable, tmp_path, capsys):
    ck = tmp_path / "ck"
    ck.mkdir()
    (ck / "checkpoint.json").write_text("[]")
    code = main(["train", str(trainable / "t.og"), "--data", str(trainable / "d.npz"),
                 "--steps", "3", "--quiet", "--checkpoint-dir", str(ck)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("onegraph train: DataLossError: "), err
    assert "checkpoint.json" in err[0]


# -- 9, 11: when and where the Saver's ops are built ------------------------------------------

def test_saver_made_before_finalize_saves_and_restores(tmp_path):
    # TF1 builds the Saver's ops in its constructor, so Scaffold/MonitoredTrainingSession
    # can finalize the graph before training and saving
    g, a, inc = _counter()
    with g.as_default():
        saver = Saver()
    by_list = Saver([a])                  # a var_list of Variables names the graph too
    g.finalize()
    sess = og.Session(g)
    sess.run(inc)
    path = saver.save(sess, str(tmp_path), global_step=1)
    path2 = by_list.save(sess, str(tmp_path / "b"), global_step=1)
    s2 = og.Session(g)
    assert saver.restore(s2, path) == path
    np.testing.assert_array_equal(s2.run(a), [1, 1, 1])
    s3 = og.Session(g)
    assert by_list.restore(s3, path2) == path2
    np.testing.assert_array_equal(s3.run(a), [1, 1, 1])


def test_defer_build_adds_the_ops_at_first_use(tmp_path):
    g = og.Graph()
    with g.as_default():
        saver = Saver(defer_build=True)    # no variables yet: TF1's defer_build
        w = og.Variable(np.full(2, 4.0, np.float32), name="w")
    sess = og.Session(g)
    path = saver.save(sess, str(tmp_path))
    np.testing.assert_array_equal(read_checkpoint(path)["w"], [4, 4])


def test_one_saver_serves_a_series_of_graphs(tmp_path):
    # graphs freed and rebuilt (a sweep): CPython hands a freed graph's id to the next
    # (8 graphs show it; 24, with a full gc each, took 17 s in the whole suite)
    saver = Saver()
    for n in range(1, 9):
        g = og.Graph()
        with g.as_default():
            vs = [og.Variable(np.full(3, float(k), np.float32), name=f"v{k}")
                  for k in range(n)]
        sess = og.Session(g)
        path = saver.save(sess, str(tmp_path / f"run{n}"))
        s2 = og.Session(g)
        saver.restore(s2, path)
        for k, v in enumerate(vs):
            np.testing.assert_array_equal(s2.run(v), np.full(3, float(k)))
        del g, sess, s2, vs, v
        gc.collect()


# -- 14, 15: arguments ---------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [-1, -5, 1.5, "3", True])
def test_max_to_keep_must_be_none_or_a_non_negative_int(bad):
    with pytest.raises(ValueError, match="max_to_keep"):
        Saver(max_to_keep=bad)


def test_max_to_keep_zero_keeps_every_checkpoint(tmp_path):
    # TF1: "If None or 0, no checkpoints are deleted from the filesystem"
    g, a, inc = _counter()
    sess = og.Session(g)
    saver = Saver(max_to_keep=0)
    paths = [saver.save(sess, str(tmp_path), global_step=s) for s in (1, 2, 3)]
    assert all(os.path.exists(p) for p in paths)
    assert checkpoints(str(tmp_path)) == paths
    assert latest_checkpoint(str(tmp_path)) == paths[-1]


def test_restore_of_none_is_a_value_error(tmp_path):
    # TF1 Saver.restore: ValueError("Can't load save_path when it is None.")
    g, a, inc = _counter()
    sess = og.Session(g)
    with pytest.raises(ValueError, match="Can't load save_path when it is None"):
        Saver().restore(sess, latest_checkpoint(str(tmp_path)))


def test_nothing_to_save_is_an_error_unless_allow_empty(tmp_path):
    # TF1 Saver.build: ValueError("No variables to save") unless allow_empty, which makes
    # the saver a no-op
    with pytest.raises(ValueError, match="No variables to save"):
        Saver([])
    g = og.Graph()
    with g.as_default():
        c = og.constant(1.0)
        with pytest.raises(ValueError, match="No variables to save"):
            Saver()
        empty = Saver(allow_empty=True)
    sess = og.Session(g)
    with pytest.raises(ValueError, match="No variables to save"):
        Saver().save(sess, str(tmp_path))           # built at first use: same check
    assert empty.save(sess, str(tmp_path), global_step=1) is None
    assert empty.restore(sess, str(tmp_path)) is None
    assert Saver([], allow_empty=True).save(sess, str(tmp_path)) is None
    assert os.listdir(tmp_path) == []
    assert sess.run(c) == 1.0


# -- 16: concurrent savers -------------------------------------------------------------------------

_CHILD = """
import sys, numpy as np, onegraph as og
d, base = sys.argv[1], int(sys.argv[2])
g = og.Graph()
with g.as_default():
    og.Variable(np.zeros(10, np.float32), name="a")
sess = og.Session(g)
s = og.train.Saver(max_to_keep=None)
for i in range(25):
    s.save(sess, d, global_step=base + i)
"""


def _env():
    return dict(os.environ, PYTHONPATH=REPO_PARENT + os.pathsep + os.environ.get("PYTHONPATH",
                                                                                ""))


def test_two_processes_saving_into_one_directory_record_every_checkpoint(tmp_path):
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, str(tmp_path), str(base)],
                              env=_env()) for base in (0, 1000)]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    on_disk = {f for f in os.listdir(tmp_path) if f.endswith(".og")}
    assert len(on_disk) == 50
    assert set(_index(tmp_path)["all"]) == on_disk


def test_two_savers_in_threads_record_every_checkpoint(tmp_path):
    g, a, inc = _counter()
    sess = og.Session(g)
    savers = [Saver(max_to_keep=None), Saver(max_to_keep=None)]

    def work(saver, base):
        for i in range(30):
            saver.save(sess, str(tmp_path), global_step=base + i)

    threads = [threading.Thread(target=work, args=(s, b)) for s, b in zip(savers, (0, 100))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(_index(tmp_path)["all"]) == 60


# -- 17: temp files of killed saves ----------------------------------------------------------------

_HOLDER = """
import sys, time
from onegraph.format.atomic import atomic_open
with atomic_open(sys.argv[1], "wb", prefix=".og-") as f:
    f.write(b"x" * 4096)
    f.flush()
    print("writing", flush=True)
    time.sleep(120)
"""


def _holder(path):
    """A process stuck inside atomic_open(path), like a save in progress."""
    p = subprocess.Popen([sys.executable, "-c", _HOLDER, path], env=_env(),
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "writing"
    return p


def test_temp_file_names_carry_the_writers_pid(tmp_path):
    from onegraph.format.atomic import atomic_open

    with atomic_open(tmp_path / "f.bin") as f:
        f.write(b"1")
        (tmp,) = os.listdir(tmp_path)
        assert f"-{os.getpid()}-" in tmp
    assert os.listdir(tmp_path) == ["f.bin"]


def test_save_removes_the_temp_files_of_killed_saves_only(tmp_path):
    killed = _holder(str(tmp_path / "ckpt-7.og"))
    killed.kill()                              # SIGKILL: no cleanup runs
    killed.wait()
    stale = [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
    assert len(stale) == 1
    live = _holder(str(tmp_path / "ckpt-8.og"))
    try:
        running = [f for f in os.listdir(tmp_path) if f.endswith(".tmp") and f not in stale]
        (tmp_path / "notes.tmp").write_text("not ours")
        g, a, inc = _counter()
        Saver().save(og.Session(g), str(tmp_path), global_step=9)
        left = set(os.listdir(tmp_path))
        assert stale[0] not in left
        assert running[0] in left               # its writer is alive
        assert "notes.tmp" in left
    finally:
        live.kill()
        live.wait()

"""`onegraph train` resuming and its edge cases, and the Saver and AdaGrad contracts it
relies on: steps counted from the model's own starting step (a model whose global step
is not 0), a checkpoint named without a step (`ckpt.og`), a per-example loss vector, a
checkpoint that cannot be written (OSError, not ExecutionError), a checkpoint file no
index records (rotated away), and AdaGrad settings that would divide 0 by 0."""

import os

import numpy as np
import pytest

import onegraph as og
from onegraph.cli import main
from onegraph.train.cli_commands import train_model


def _linear(path, *, global_step=0, per_example=False, step_var=True, checkpoint_to=None):
    """Save to `path` a linear model (x (N, 4) -> y (N,)) with a `train` signature.

    global_step: the value the saved model's global step holds (a model trained before).
    per_example: the `loss` output is the per-example vector, not its mean.
    step_var: False makes the model without a global step (minimize(global_step=None)).
    checkpoint_to: also write `Saver().save(sess, checkpoint_to)` (no step: ckpt.og) after
        setting w to 1 and, with a global step, adding 2 to it.
    """
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 4], name="x")
        y = og.placeholder(og.float32, [None], name="y")
        w = og.Variable(np.zeros((4, 1), np.float32), name="w")
        err = og.square(og.reshape(og.matmul(x, w), [-1]) - y)
        loss = err if per_example else og.reduce_mean(err)
        if step_var:
            gs = og.train.get_or_create_global_step()
            train = og.train.SGD(0.01).minimize(loss, global_step=gs)
        else:
            train = og.train.SGD(0.01).minimize(loss, global_step=None)
        saver = og.train.Saver()
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    if step_var and global_step:
        sess.run(gs.assign(global_step))
    og.save(g, str(path), session=sess, signatures={"train": og.signature(
        inputs={"x": x, "y": y}, outputs={"loss": loss}, targets=[train])})
    if checkpoint_to is not None:
        sess.run(w.assign(np.ones((4, 1), np.float32)))
        if step_var:
            sess.run(gs.assign(global_step + 2))
        saver.save(sess, str(checkpoint_to))


@pytest.fixture()
def data(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "data.npz"
    np.savez(path, x=rng.standard_normal((20, 4)).astype(np.float32),
             y=rng.standard_normal(20).astype(np.float32))
    return str(path)


def _values(path):
    return {t.name: t.data for t in og.load(str(path)).graph.tensors
            if t.kind is og.TensorKind.VARIABLE}


def _ckpts(directory):
    return sorted(f for f in os.listdir(directory) if f.endswith(".og"))


# -- steps are counted from the model's starting step -------------------------------------

def test_resuming_a_model_whose_global_step_is_not_zero_trains_the_steps_left(tmp_path,
                                                                              data):
    """A model at global step 3, trained 4 of 6 steps and interrupted, resumes at step 4
    and trains 2, ending where an uninterrupted 6-step run ends (same batches)."""
    _linear(tmp_path / "m.og", global_step=3)
    m, ck = str(tmp_path / "m.og"), str(tmp_path / "ck")
    first = train_model(m, data, 4, 5, ck, checkpoint_every=2, quiet=True)
    assert first["start_step"] == 0 and first["steps"] == 4
    assert _ckpts(ck) == ["ckpt-2.og", "ckpt-4.og"]  # steps of this job, not global steps
    resumed = train_model(m, data, 6, 5, ck, output=str(tmp_path / "resumed.og"),
                          checkpoint_every=2, quiet=True)
    assert resumed["start_step"] == 4 and resumed["steps"] == 2
    assert [s for s, _ in resumed["losses"]] == [5, 6]
    straight = train_model(m, data, 6, 5, output=str(tmp_path / "straight.og"), quiet=True)
    assert [s for s, _ in straight["losses"]] == [1, 2, 3, 4, 5, 6]
    a, b = _values(tmp_path / "resumed.og"), _values(tmp_path / "straight.og")
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert int(b["global_step"]) == 3 + 6
    assert resumed["losses"] == straight["losses"][4:]


# -- a checkpoint whose name holds no step ------------------------------------------------

def test_resuming_from_ckpt_og_without_a_global_step_starts_at_step_0(tmp_path, data,
                                                                      capsys):
    ck = tmp_path / "ck"
    _linear(tmp_path / "m.og", step_var=False, checkpoint_to=ck)
    assert _ckpts(ck) == ["ckpt.og"]
    code = main(["train", str(tmp_path / "m.og"), "--data", data, "--steps", "3",
                 "--checkpoint-dir", str(ck), "--output", str(tmp_path / "o.og"),
                 "--plot", str(tmp_path / "l.png")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "Traceback" not in err
    assert f"resumed from {ck / 'ckpt.og'} at step 0" in err
    assert "trained 3 steps" in err
    # the checkpoint's values were the starting point, not the model's zeros
    w = _values(tmp_path / "o.og")["w"]
    assert np.all(np.abs(w - 1) < 0.5)


def test_resuming_from_ckpt_og_counts_the_global_steps_since_the_models(tmp_path, data):
    # the model holds global step 3, the checkpoint 5: 2 steps of this job were done
    ck = tmp_path / "ck"
    _linear(tmp_path / "m.og", global_step=3, checkpoint_to=ck)
    summary = train_model(str(tmp_path / "m.og"), data, 5, 4, str(ck), quiet=True)
    assert summary["start_step"] == 2 and summary["steps"] == 3


# -- a per-example loss --------------------------------------------------------------------

def test_a_per_example_loss_is_shown_as_its_mean(tmp_path, data, capsys):
    _linear(tmp_path / "m.og", per_example=True)
    code = main(["train", str(tmp_path / "m.og"), "--data", data, "--steps", "3",
                 "--batch-size", "5"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "Traceback" not in err and "trained 3 steps" in err
    summary = train_model(str(tmp_path / "m.og"), data, 1, 5, quiet=True)
    # step 0's loss, computed with w = 0 on the rows that step draws
    arrays = np.load(data)
    rows = np.random.default_rng([0, 0]).integers(0, 20, 5)
    assert summary["losses"][0][0] == 1
    assert summary["losses"][0][1] == pytest.approx(float(np.mean(arrays["y"][rows] ** 2)),
                                                    rel=1e-5)


def test_a_loss_that_is_no_number_is_refused_before_any_update(tmp_path, data, capsys):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 4], name="x")
        w = og.Variable(np.zeros((4, 1), np.float32), name="w")
        out = og.matmul(x, w)
        train = og.train.SGD(0.01).minimize(og.reduce_mean(og.square(out)))
    og.save(g, str(tmp_path / "m.og"), signatures={"train": og.signature(
        inputs={"x": x}, outputs={"loss": og.greater(out, 0.0)}, targets=[train])})
    code = main(["train", str(tmp_path / "m.og"), "--data", data, "--steps", "3",
                 "--checkpoint-dir", str(tmp_path / "ck")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("onegraph train: OneGraphError: the 'train' signature's loss ")
    assert err[0].endswith("is bool, not a number")
    assert not (tmp_path / "ck").exists()


# -- a checkpoint that cannot be written ---------------------------------------------------

def test_saver_save_raises_the_oserror_of_a_failed_write(tmp_path):
    g = og.Graph()
    with g.as_default():
        og.Variable(np.ones(3, np.float32), name="v")
        saver = og.train.Saver()
    sess = og.Session(g)
    (tmp_path / "ckpt-1.og").mkdir()  # the checkpoint's name is taken by a folder
    with pytest.raises(OSError) as info:
        saver.save(sess, str(tmp_path), global_step=1)
    assert isinstance(info.value, IsADirectoryError)
    assert str(tmp_path / "ckpt-1.og") in str(info.value)
    assert not isinstance(info.value, og.errors.OneGraphError)


def test_cli_words_a_checkpoint_it_cannot_write(tmp_path, data, capsys):
    _linear(tmp_path / "m.og")
    ck = tmp_path / "ck"
    (ck / "ckpt-2.og").mkdir(parents=True)
    code = main(["train", str(tmp_path / "m.og"), "--data", data, "--steps", "3",
                 "--checkpoint-every", "2", "--checkpoint-dir", str(ck), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1, err
    assert err[0].startswith(f"onegraph train: OneGraphError: --checkpoint-dir {ck}: "
                             f"cannot write {ck / 'ckpt-2.og'}: "), err


# -- rotation of a checkpoint no index records ---------------------------------------------

def _one_variable():
    g = og.Graph()
    with g.as_default():
        og.Variable(np.ones(3, np.float32), name="v")
    return og.Session(g)


def _fail_index_write(monkeypatch):
    real = os.replace

    def enospc_on_index(src, dst, *a, **k):
        if os.fspath(dst).endswith("checkpoint.json"):
            raise OSError(28, "No space left on device")
        return real(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", enospc_on_index)


def test_a_save_whose_index_cannot_be_written_leaves_no_unrecorded_file(tmp_path,
                                                                        monkeypatch):
    sess = _one_variable()
    saver = og.train.Saver(max_to_keep=1)
    saver.save(sess, str(tmp_path), global_step=1)
    with monkeypatch.context() as m:
        _fail_index_write(m)
        with pytest.raises(OSError):
            saver.save(sess, str(tmp_path), global_step=2)
        with pytest.raises(OSError):  # re-saving a recorded step keeps that file
            saver.save(sess, str(tmp_path), global_step=1)
    assert _ckpts(tmp_path) == ["ckpt-1.og"]
    for step in (3, 4, 5):
        saver.save(sess, str(tmp_path), global_step=step)
    assert _ckpts(tmp_path) == ["ckpt-5.og"]


def test_rotation_deletes_no_file_the_index_does_not_record(tmp_path):
    sess = _one_variable()
    # copied in by hand: lower and higher steps, another name
    for name in ("ckpt-1.og", "ckpt-9.og", "model-1.og"):
        (tmp_path / name).write_bytes(b"x")
    saver = og.train.Saver(max_to_keep=1)
    for step in (3, 4):
        saver.save(sess, str(tmp_path), global_step=step)
    assert _ckpts(tmp_path) == ["ckpt-1.og", "ckpt-4.og", "ckpt-9.og", "model-1.og"]


# -- AdaGrad -------------------------------------------------------------------------------

def test_adagrad_refuses_a_zero_accumulator_with_a_zero_epsilon():
    with pytest.raises(ValueError, match="initial_accumulator_value.*epsilon"):
        og.train.AdaGrad(0.1, initial_accumulator_value=0.0, epsilon=0.0)
    # either one positive keeps the division defined
    og.train.AdaGrad(0.1, initial_accumulator_value=0.0, epsilon=1e-7)
    og.train.AdaGrad(0.1, initial_accumulator_value=0.1, epsilon=0.0)


def test_a_train_signature_of_another_graph_is_refused_in_one_line(tmp_path, data, capsys):
    from onegraph.format import Graph, Model

    _linear(tmp_path / "t.og")
    trained = og.load(str(tmp_path / "t.og"))
    sig = trained.signatures["train"]
    main_graph = Graph("main")
    a = main_graph.add_input("a", "float32", [3])
    (z,) = main_graph.add_node("Neg", [a], ["z"])
    main_graph.outputs = [z]
    two = Model(graphs=[main_graph, trained.graphs[0]])
    two.opset_imports = dict(trained.opset_imports)
    two.metadata = dict(trained.metadata)
    two.add_signature("train", inputs=dict(sig.inputs), outputs=dict(sig.outputs),
                      targets=list(sig.targets), graph=1)
    og.save(two, str(tmp_path / "two.og"))
    assert main(["train", str(tmp_path / "two.og"), "--data", data, "--steps", "2",
                 "--batch-size", "4"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the 'train' signature runs graph 1" in err[0]


def test_a_save_interrupted_after_its_index_was_written_keeps_its_file(tmp_path,
                                                                        monkeypatch):
    sess = _one_variable()
    saver = og.train.Saver(max_to_keep=2)
    saver.save(sess, str(tmp_path), global_step=1)
    real = os.replace

    def replace_then_interrupt(src, dst, *a, **k):
        real(src, dst, *a, **k)
        if os.fspath(dst).endswith("checkpoint.json"):
            raise KeyboardInterrupt  # e.g. while the folder is synced after the rename

    monkeypatch.setattr(os, "replace", replace_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        saver.save(sess, str(tmp_path), global_step=2)
    monkeypatch.setattr(os, "replace", real)
    assert og.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-2.og")
    assert "ckpt-2.og" in _ckpts(tmp_path)

"""Checkpoints (Saver), saving trainable models with signatures, and `onegraph train`."""

import os
import subprocess
import sys

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import DataLossError

REPO_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def _model(lr=3e-3):
    g = og.Graph()
    with g.as_default():
        og.set_random_seed(0)
        x = og.placeholder(og.float32, [None, 64], name="x")
        y = og.placeholder(og.int64, [None], name="y")
        h = og.nn.dense(x, 32, activation=og.nn.relu, name="fc1")
        logits = og.nn.dense(h, 10, name="logits")
        loss = og.reduce_mean(og.nn.sparse_softmax_cross_entropy(y, logits), name="loss")
        train = og.train.Adam(lr).minimize(loss,
                                           global_step=og.train.get_or_create_global_step())
    return g, x, y, logits, loss, train


def _batch(step, n=64):
    images, labels = og.datasets.digits("train")
    rows = np.random.default_rng([0, step]).integers(0, len(labels), n)
    return images.reshape(-1, 64)[rows].astype(np.float32) / 16, labels[rows]


def test_save_restore_latest_and_max_to_keep(tmp_path):
    g, x, y, _, loss, train = _model()
    sess = og.Session(g)
    saver = og.train.Saver(max_to_keep=2)
    step = og.train.get_or_create_global_step(g)
    saved = {}
    for i in range(3):
        xb, yb = _batch(i)
        sess.run(train, {x: xb, y: yb})
        path = saver.save(sess, str(tmp_path), global_step=step)
        saved[path] = {v.name: sess.run(v) for v in og.global_variables(g)}
    files = sorted(p for p in os.listdir(tmp_path) if p.endswith(".og"))
    assert files == ["ckpt-2.og", "ckpt-3.og"]
    assert og.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-3.og")
    # a checkpoint is a .og model holding variables only
    m = og.load(os.path.join(tmp_path, "ckpt-3.og"), check_data=True)
    assert all(t.kind is og.TensorKind.VARIABLE for t in m.graph.tensors)
    # restore an older one into a fresh session
    sess2 = og.Session(g)
    older = os.path.join(tmp_path, "ckpt-2.og")
    saver.restore(sess2, older)
    for v in og.global_variables(g):
        np.testing.assert_array_equal(sess2.run(v), saved[older][v.name])


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_corrupted_checkpoint_raises_and_falls_back(tmp_path, damage):
    g, x, y, _, loss, train = _model()
    sess = og.Session(g)
    saver = og.train.Saver()
    for i in (1, 2):
        xb, yb = _batch(i)
        sess.run(train, {x: xb, y: yb})
        good = saver.save(sess, str(tmp_path), global_step=i)
        if i == 1:
            first_values = {v.name: sess.run(v) for v in og.global_variables(g)}
    bad = good
    data = bytearray(open(bad, "rb").read())
    if damage == "flip":
        data[-200] ^= 0xFF           # inside the data tail: a CRC mismatch
    else:
        data = data[: len(data) - 300]
    with open(bad, "wb") as f:
        f.write(data)
    sess2 = og.Session(g)
    with pytest.raises(DataLossError, match="ckpt-2.og"):
        saver.restore(sess2, bad)
    used = saver.restore(sess2, bad, fallback=True)
    assert used.endswith("ckpt-1.og")
    for v in og.global_variables(g):
        np.testing.assert_array_equal(sess2.run(v), first_values[v.name])


def _save_trainable(path):
    g, x, y, logits, loss, train = _model()
    og.save(g, path, signatures={
        "serving": og.signature(inputs={"x": x}, outputs={"logits": logits}),
        "train": og.signature(inputs={"x": x, "y": y}, outputs={"loss": loss},
                              targets=[train])})
    return g


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=REPO_PARENT + os.pathsep + os.environ.get("PYTHONPATH",
                                                                                ""))
    return subprocess.run([sys.executable, "-m", "onegraph.cli", *args], env=env,
                          capture_output=True, text=True, timeout=300)


def test_saved_model_has_signatures_and_trains_from_file(tmp_path):
    model_path = str(tmp_path / "mlp.og")
    _save_trainable(model_path)
    m = og.load(model_path)
    assert set(m.signatures) == {"serving", "train"} and m.signatures["train"].targets
    images, labels = og.datasets.digits("train")
    np.savez(tmp_path / "train.npz", x=images.reshape(-1, 64).astype(np.float32) / 16,
             y=labels)
    from onegraph.train.cli_commands import train_model

    out = str(tmp_path / "trained.og")
    summary = train_model(model_path, str(tmp_path / "train.npz"), 150, 64, output=out,
                          quiet=True)
    first = np.mean([v for _, v in summary["losses"][:10]])
    last = np.mean([v for _, v in summary["losses"][-10:]])
    assert last < first / 3
    trained = og.Session(og.load(out))
    xte, yte = og.datasets.digits("test")
    logits = trained.run_signature("serving", x=xte.reshape(-1, 64).astype(np.float32) / 16)
    assert np.mean(np.argmax(logits["logits"], 1) == yte) > 0.9


def test_cli_kill_restore_continue_equals_uninterrupted(tmp_path):
    """Train N steps in one process, 'kill' it, resume for M more in a new process:
    the parameters equal those of one uninterrupted N + M step run."""
    model_path = str(tmp_path / "mlp.og")
    _save_trainable(model_path)
    images, labels = og.datasets.digits("train")
    data = str(tmp_path / "train.npz")
    np.savez(data, x=images.reshape(-1, 64).astype(np.float32) / 16, y=labels)
    ck = str(tmp_path / "ck")
    r = _cli("train", model_path, "--data", data, "--steps", "30", "--batch-size", "32",
             "--checkpoint-dir", ck, "--checkpoint-every", "10", "--quiet")
    assert r.returncode == 0, r.stderr
    assert og.train.latest_checkpoint(ck).endswith("ckpt-30.og")
    r = _cli("train", model_path, "--data", data, "--steps", "50", "--batch-size", "32",
             "--checkpoint-dir", ck, "--output", str(tmp_path / "resumed.og"), "--quiet")
    assert r.returncode == 0, r.stderr
    r = _cli("train", model_path, "--data", data, "--steps", "50", "--batch-size", "32",
             "--output", str(tmp_path / "straight.og"), "--plot", str(tmp_path / "l.png"),
             "--quiet")
    assert r.returncode == 0, r.stderr
    a = og.load(str(tmp_path / "resumed.og"))
    b = og.load(str(tmp_path / "straight.og"))
    names = [t.name for t in b.graph.tensors if t.kind is og.TensorKind.VARIABLE]
    assert any("kernel" in n for n in names)
    for n in names:
        np.testing.assert_array_equal(a.graph.tensor(n).data, b.graph.tensor(n).data, err_msg=n)
    step = b.graph.tensor("global_step").data
    assert int(step) == 50

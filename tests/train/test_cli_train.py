"""`onegraph train` (in-process via cli.main): resuming from a checkpoint that is already
at --steps, the progress bar in logs, destinations checked before anything is made,
and the help text."""

import numpy as np
import pytest

import onegraph as og
from onegraph.cli import main
from onegraph.train.cli_commands import train_model

from ..trainable import save_linear_trainable


@pytest.fixture()
def trainable(tmp_path):
    save_linear_trainable(tmp_path / "t.og")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 3)).astype(np.float32)
    np.savez(tmp_path / "d.npz", x=x, y=x @ np.float32([[1], [2], [3]]))
    return tmp_path


def _train(d, *extra):
    return main([str(a) for a in ["train", d / "t.og", "--data", d / "d.npz", *extra]])


def _weights(path):
    return next(t.data for t in og.load(str(path)).graph.tensors if t.name == "w")


def test_a_checkpoint_already_at_steps_trains_nothing_and_says_so(trainable, capsys):
    """Like TF's StopAtStepHook: exit 0 at once, with a note on stderr, the output
    holding the checkpoint's values, and 0 steps in the summary (not negative)."""
    d = trainable
    assert _train(d, "--steps", "4", "--checkpoint-dir", d / "ck", "--output", d / "a.og",
                  "--quiet") == 0
    capsys.readouterr()
    assert _train(d, "--steps", "2", "--checkpoint-dir", d / "ck", "--output", d / "b.og",
                  "--quiet") == 0
    out, err = capsys.readouterr()
    assert err.strip().splitlines() == [
        f"checkpoint {d / 'ck' / 'ckpt-4.og'} is already at step 4 >= --steps 2: "
        "nothing to train"]
    np.testing.assert_array_equal(_weights(d / "b.og"), _weights(d / "a.og"))
    assert not (d / "b_loss.png").exists()  # no loss curve without losses
    summary = train_model(str(d / "t.og"), str(d / "d.npz"), 2, 32,
                          checkpoint_dir=str(d / "ck"), quiet=True)
    assert summary["start_step"] == 4 and summary["steps"] == 0
    assert summary["losses"] == [] and summary["steps_per_second"] is None


def test_no_progress_bar_when_stderr_is_not_a_terminal(trainable, capsys):
    # under pytest stderr is captured, as in a CI log: one summary line, no redraws
    assert _train(trainable, "--steps", "3") == 0
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("trained 3 steps, final loss ")


def test_destinations_are_checked_before_anything_is_made(trainable, capsys):
    d = trainable
    assert _train(d, "--steps", "2", "--checkpoint-dir", d / "ck",
                  "--output", d / "no" / "o.og") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        f"onegraph train: OneGraphError: --output {d / 'no' / 'o.og'}: cannot write there")
    assert not (d / "ck").exists()  # the checkpoint folder is made only after the checks


def test_help_states_every_option_and_its_default(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for words in ("counting those of a checkpoint resumed from --checkpoint-dir",
                  "rows per step, drawn at random (default: 32)",
                  "resume from the latest one found here",
                  "(default: 100)", "(default: 0)", "no progress bar or summary"):
        assert words in text, words

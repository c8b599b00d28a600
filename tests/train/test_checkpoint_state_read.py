"""og.train.get_checkpoint_state reads TF's checkpoint state text files (what
tf.train.Saver and og.train.update_checkpoint_state write) as TF1's reads them, against
TF 2.21's recordings (tools/record_tf_checkpoint_state_read.py)."""

from __future__ import annotations

import json
import os

import pytest

import onegraph as og
from onegraph.errors import DataLossError

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                  "tf1_checkpoint_state_read.json")))


@pytest.mark.parametrize("name", sorted(REF))
def test_reads_tfs_file_as_tf(name, tmp_path):
    case = REF[name]
    d = str(tmp_path)
    with open(os.path.join(d, case["filename"] or "checkpoint"), "w") as f:
        f.write(case["text"].replace("<D>", d))
    state = og.train.get_checkpoint_state(d, latest_filename=case["filename"])
    assert state.model_checkpoint_path == case["latest"].replace("<D>", d)
    assert list(state.all_model_checkpoint_paths) == [
        p.replace("<D>", d) for p in case["all"]]


def test_update_checkpoint_state_round_trips(tmp_path):
    d = str(tmp_path)
    og.train.update_checkpoint_state(d, "model-2", ["model-1", "model-2"])
    state = og.train.get_checkpoint_state(d)
    assert state.model_checkpoint_path == os.path.join(d, "model-2")
    assert list(state.all_model_checkpoint_paths) == [os.path.join(d, "model-1"),
                                                      os.path.join(d, "model-2")]
    assert og.train.get_checkpoint_state(d, latest_filename="other") is None


def test_damaged_state_file_is_data_loss(tmp_path):
    (tmp_path / "checkpoint").write_text("not a checkpoint state\n")
    with pytest.raises(DataLossError, match="model_checkpoint_path"):
        og.train.get_checkpoint_state(str(tmp_path))

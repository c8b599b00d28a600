"""Record TF1's checkpoint state files and what tf.train.get_checkpoint_state reads back
from them, for tests/train/test_checkpoint_state_read.py.

Run by hand with the scratch TensorFlow venv:
    /tmp/s51/tfvenv/bin/python tools/record_tf_checkpoint_state_read.py
Writes tests/train/data/tf1_checkpoint_state_read.json: per case the file's text TF wrote
and the state TF read, the directory written as "<D>".
"""

from __future__ import annotations

import os
import tempfile

import tensorflow.compat.v1 as tf
from tf_recording import TRAIN_TESTS, write_reference

# (model_checkpoint_path, all_model_checkpoint_paths, latest_filename); "<D>" is the dir
CASES = {
    "relative": ("model-3", ["model-1", "model-2", "model-3"], None),
    "absolute": ("<D>/model-9", ["<D>/model-8", "<D>/model-9"], None),
    "mixed_custom_file": ("m-2", ["<D>/m-1", "m-2"], "my_state"),
    "latest_only": ("ckpt-5", None, None),
}


def main():
    out = {}
    for name, (latest, every, filename) in CASES.items():
        with tempfile.TemporaryDirectory() as d:
            def put(p):
                return p.replace("<D>", d)
            tf.train.update_checkpoint_state(
                d, put(latest), None if every is None else [put(p) for p in every],
                latest_filename=filename)
            with open(os.path.join(d, filename or "checkpoint")) as f:
                text = f.read().replace(d, "<D>")
            state = tf.train.get_checkpoint_state(d, latest_filename=filename)
            out[name] = {"text": text, "filename": filename,
                         "latest": state.model_checkpoint_path.replace(d, "<D>"),
                         "all": [p.replace(d, "<D>")
                                 for p in state.all_model_checkpoint_paths]}
    write_reference(TRAIN_TESTS / "data" / "tf1_checkpoint_state_read.json", out)


if __name__ == "__main__":
    main()

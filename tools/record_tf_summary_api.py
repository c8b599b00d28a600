"""Record TensorFlow's summary names, tags, collections and merges for the calls of
tests/train/summary_api_cases.py, and the events its hooks and FileWriter write in the
loops of tests/train/summary_hook_cases.py, for tests/train/test_summary.py.

Needs tensorflow (not a onegraph dependency); run it by hand when the cases change:

    python tools/record_tf_summary_api.py

It writes tests/train/data/tf1_summary_api_reference.json ({"api": ..., "hooks": {case:
events}}).
"""

from __future__ import annotations

import glob
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "train", "data")
sys.path.insert(0, os.path.join(HERE, "..", "tests", "train"))

import summary_api_cases as cases  # noqa: E402
import summary_hook_cases as hook_cases  # noqa: E402


def _read(tf, logdir):
    """(step, kind, detail) of every event in logdir's one event file."""
    (path,) = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    for event in tf.train.summary_iterator(path):
        kind = event.WhichOneof("what")
        if kind == "summary":
            yield event.step, kind, sorted(v.tag for v in event.summary.value)
        elif kind == "session_log":
            yield event.step, kind, int(event.session_log.status)
        else:
            yield event.step, kind, None


def main() -> None:
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()

    def tags_of(data: bytes) -> list:
        return [v.tag for v in tf.Summary.FromString(data).value]

    recorded = {"api": cases.describe(tf, tags_of), "hooks": {}}
    for name, train in hook_cases.CASES.items():
        with tempfile.TemporaryDirectory() as logdir:
            with tf.Graph().as_default():
                train(tf, logdir)
            tf.summary.FileWriterCache.clear()  # closes (flushes) the hooks' writers
            recorded["hooks"][name] = hook_cases.events(_read(tf, logdir))
    print(json.dumps(recorded["hooks"], indent=1))
    with open(os.path.join(DATA, "tf1_summary_api_reference.json"), "w") as f:
        json.dump(recorded, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()

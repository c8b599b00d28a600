"""Summary-building calls that tools/record_tf_summary_api.py runs under TensorFlow
(tf.compat.v1) and tests/train/test_summary.py runs under onegraph: names, tags,
collections and merges must come out the same.

`describe(tf, tags_of)` builds the graph in a fresh tf.Graph and returns
{"summaries": [[key, node name, op type, [tags when run]]], "collections": {...},
"merged": {key: node name or None}}; `tags_of(serialized)` lists the tags of a
serialized Summary (TF: tf.Summary.FromString; onegraph: the test's own reader).
"""

from __future__ import annotations

import numpy as np


def _build(tf) -> dict:
    x = tf.constant(1.0)
    made = {}
    made["loss"] = tf.summary.scalar("loss", x)
    made["loss_again"] = tf.summary.scalar("loss", x)
    with tf.name_scope("train"):
        made["acc"] = tf.summary.scalar("acc", x)
        made["hist"] = tf.summary.histogram("w", tf.constant([1.0, 2.0]))
    made["family"] = tf.summary.scalar("lr", x, family="opt")
    made["family_again"] = tf.summary.scalar("lr", x, family="opt")
    with tf.name_scope("s"):
        made["family_scoped"] = tf.summary.scalar("x", x, family="fam")
    made["images"] = tf.summary.image("img", tf.zeros([2, 4, 4, 3]), max_outputs=2)
    made["image_one"] = tf.summary.image("one", tf.zeros([2, 4, 4, 1]), max_outputs=1)
    made["text"] = tf.summary.text("note", tf.constant("hi"))
    made["audio"] = tf.summary.audio("snd", tf.zeros([2, 10]), 8000.0, max_outputs=1)
    made["cleaned"] = tf.summary.scalar("bad name!", x)
    made["leading_slash"] = tf.summary.scalar("/root", x)
    made["own_collection"] = tf.summary.scalar("extra", x, collections=["mine"])
    made["no_collection"] = tf.summary.scalar("hidden", x, collections=[])
    made["int_value"] = tf.summary.scalar("count", tf.constant(3, tf.int32))
    made["merge_named"] = tf.summary.merge([made["loss"], made["acc"]], name="m")
    made["merge_default"] = tf.summary.merge([made["family"], made["text"]])
    return made


def describe(tf, tags_of) -> dict:
    """See the module doc."""
    graph = tf.Graph()
    with graph.as_default():
        made = _build(tf)
        merged = {"all": tf.summary.merge_all(), "train": tf.summary.merge_all(scope="train"),
                  "mine": tf.summary.merge_all("mine"), "empty": tf.summary.merge_all("none")}
        collections = {key: sorted(_plain(t.name) for t in tf.get_collection(key))
                       for key in ("summaries", "mine")}
        with tf.Session() as sess:
            runs = {key: sess.run(t) for key, t in made.items()}
            runs.update({f"merged_{key}": sess.run(t) for key, t in merged.items()
                         if t is not None})
        summaries = [[key, _plain(t.name), t.op.type, tags_of(_bytes(runs[key]))]
                     for key, t in made.items()]
        merged_out = {key: None if t is None else [_plain(t.name),
                                                   tags_of(_bytes(runs[f"merged_{key}"]))]
                      for key, t in merged.items()}
    return {"summaries": summaries, "collections": collections, "merged": merged_out}


def _plain(name: str) -> str:
    return name[:-2] if name.endswith(":0") else name


def _bytes(value) -> bytes:
    """A run's value (TF: bytes; onegraph: a 0-d object array holding bytes)."""
    return value if isinstance(value, bytes) else np.asarray(value, dtype=object).item()

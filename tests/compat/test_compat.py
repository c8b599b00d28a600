"""onegraph.compat (TF's tf.compat): v1 is onegraph's API with TF1's eager switches, and
the text helpers convert as TF's do."""

from __future__ import annotations

import pytest

import onegraph as og
import onegraph.compat.v1 as tf


def test_v1_is_onegraphs_api_in_graph_mode():
    tf.disable_eager_execution()
    tf.disable_v2_behavior()
    assert not tf.executing_eagerly()
    assert tf.placeholder is og.placeholder and tf.nn is og.nn and og.compat.v1 is tf
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        with tf.Session() as sess:
            assert sess.run(tf.reduce_sum(x * 2.0), {x: [[1.0, 2.0]]}) == 6.0
    with pytest.raises(NotImplementedError, match="no eager execution"):
        tf.enable_eager_execution()
    with pytest.raises(AttributeError):
        tf.no_such_function


def test_text_helpers():
    assert og.compat.as_bytes("h\u00e9") == "h\u00e9".encode() == og.compat.as_bytes(
        bytearray("h\u00e9".encode()))
    assert og.compat.as_text(b"h\xc3\xa9") == "h\u00e9" == og.compat.as_str("h\u00e9")
    for bad in (3, None):
        with pytest.raises(TypeError, match="Expected binary or unicode string"):
            og.compat.as_bytes(bad)
        with pytest.raises(TypeError, match="Expected binary or unicode string"):
            og.compat.as_text(bad)

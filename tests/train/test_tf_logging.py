"""og.logging against TF1's tf.logging: level constants and the default verbosity recorded
from TF (tools/record_tf_gfile.py), counting rules as TF's tf_logging documents them (the 1st,
(n+1)th, ... call of log_every_n; the first n of log_first_n, per call site)."""

from __future__ import annotations

import json
import logging
import os

import pytest

from onegraph.train import tf_logging

L = tf_logging.logging_namespace
DATA = os.path.join(os.path.dirname(__file__), "data", "tf1_gfile_reference.json")
with open(DATA) as _f:
    REF = json.load(_f)["logging"]


@pytest.fixture
def records(caplog):
    """Captures the "onegraph" logger at DEBUG, restoring its level afterwards."""
    logger = logging.getLogger("onegraph")
    old = logger.level
    caplog.set_level(logging.DEBUG, logger="onegraph")
    yield caplog
    logger.setLevel(old)


def test_constants_are_tfs():
    for name in ("DEBUG", "INFO", "WARN", "ERROR", "FATAL"):
        assert getattr(L, name) == REF[name]


def test_default_verbosity_is_tfs():
    logger = logging.getLogger("onegraph")
    old = logger.level
    logger.setLevel(logging.NOTSET)  # TF gives its logger no level of its own
    try:
        assert L.get_verbosity() == REF["default_verbosity"]
    finally:
        logger.setLevel(old)
    assert L.get_logger().name == "onegraph" and REF["logger_name"] == "tensorflow"


def test_levels_and_messages(records):
    L.debug("d %d", 1)
    L.info("i %s", "x")
    L.warn("w")
    L.warning("w2")
    L.error("e")
    L.fatal("f")
    L.log(L.INFO, "l")
    L.vlog(L.WARN, "v")
    L.TaskLevelStatusMessage("t")
    got = [(r.levelno, r.getMessage()) for r in records.records]
    assert got == [(10, "d 1"), (20, "i x"), (30, "w"), (30, "w2"), (40, "e"), (50, "f"),
                   (20, "l"), (30, "v"), (40, "t")]
    assert all(r.name == "onegraph" for r in records.records)
    # records name the caller's file, not og's logging module
    assert {os.path.basename(r.pathname) for r in records.records} == {"test_tf_logging.py"}


def test_set_verbosity_filters(records):
    L.set_verbosity(L.ERROR)
    assert L.get_verbosity() == 40
    L.info("hidden")
    L.warn("hidden")
    L.error("shown")
    assert [r.getMessage() for r in records.records] == ["shown"]
    with pytest.raises(TypeError):
        L.set_verbosity("loud")


def test_log_if_every_n_first_n(records):
    for i in range(7):
        L.log_every_n(L.INFO, "every %d", 3, i)
    for i in range(5):
        L.log_first_n(L.INFO, "first %d", 2, i)
    for i in range(4):
        L.log_if(L.INFO, "if %d", i % 2 == 1, i)
    assert [r.getMessage() for r in records.records] == [
        "every 0", "every 3", "every 6", "first 0", "first 1", "if 1", "if 3"]
    assert {os.path.basename(r.pathname) for r in records.records} == {"test_tf_logging.py"}


def test_counts_are_per_call_site(records):
    for _ in range(2):
        L.log_first_n(L.INFO, "a", 1)
        L.log_first_n(L.INFO, "b", 1)
    assert [r.getMessage() for r in records.records] == ["a", "b"]


def test_bad_arguments_and_flush(records):
    with pytest.raises(ValueError):
        L.log_every_n(L.INFO, "x", 0)
    with pytest.raises(TypeError):
        L.log("INFO", "x")
    L.flush()

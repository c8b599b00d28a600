"""TF1's tf.train.SessionManager: makes an og.Session of a graph that is restored from a
checkpoint or initialized, then checked for readiness.

As in TF1: `prepare_session` restores the latest checkpoint of `checkpoint_dir` (or
`checkpoint_filename_with_path`) when a saver is given and one exists, else runs
init_op (fed init_feed_dict) and init_fn; it then runs local_init_op once
ready_for_local_init_op reports nothing, and checks ready_op. `recover_session` only
restores; `wait_for_session` only runs the local init op and checks.

Difference from TF1: sessions run in this process and share no state with any other,
so no other process can make a session ready or write the checkpoint awaited. A
session that is not ready is not retried every `recovery_wait_secs`: wait_for_session
raises DeadlineExceededError at once, and waiting for a checkpoint polls the directory
(another thread of this process may still write one).
"""

from __future__ import annotations

import logging
import time

import numpy as np

from ..errors import DeadlineExceededError, FailedPreconditionError
from . import graph as _g
from .checkpoint_utils import get_checkpoint_state
from .session import Session

_log = logging.getLogger("onegraph.train")


def _check_master(master, who: str) -> None:
    """Raises ValueError for a master other than '' (no remote sessions)."""
    if master not in ("", None):
        raise ValueError(f"SessionManager.{who}: master {master!r} is not supported: "
                         "onegraph sessions run in this process (give master='')")


def _maybe_name(op):
    return getattr(op, "name", op)


def _ready(op, sess, what: str):
    """(True, None) when `op` is None or reports nothing; else (False, message), TF1's
    "Variables not initialized: a, b"."""
    if op is None:
        return True, None
    try:
        value = sess.run(op)
    except FailedPreconditionError as e:
        if "uninitialized" not in str(e):
            _log.warning("%s : error [%s]", what, e)
            raise
        return False, str(e)
    value = None if value is None else np.asarray(value)
    if value is None or value.dtype == np.int32 or value.size == 0:
        return True, None
    names = [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in value.ravel()]
    return False, "Variables not initialized: " + ", ".join(names)


class SessionManager:
    """Creates sessions that are initialized or restored and ready (TF1's
    tf.train.SessionManager; see the module doc).

    Args:
        local_init_op: run in every session made, once ready_for_local_init_op is.
        ready_op: a tensor listing what is not ready (empty when ready), e.g.
            og.report_uninitialized_variables(); None skips the check.
        ready_for_local_init_op: the same check run before local_init_op.
        graph: the graph (default: the default graph).
        recovery_wait_secs: seconds between looks for an awaited checkpoint.
        local_init_run_options: accepted and ignored (TF1's RunOptions).
        local_init_feed_dict: fed to local_init_op.

    Raises:
        ValueError: ready_for_local_init_op without local_init_op (TF1's check).
        TypeError: recovery_wait_secs is not a number.
    """

    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None,
                 graph=None, recovery_wait_secs=30, local_init_run_options=None,
                 local_init_feed_dict=None):
        if graph is None:
            graph = _g.get_default_graph()
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError("If you pass a ready_for_local_init_op you must also pass a "
                             f"local_init_op , ready_for_local_init_op "
                             f"[{ready_for_local_init_op}]")
        if isinstance(recovery_wait_secs, bool) or \
                not isinstance(recovery_wait_secs, (int, float)):
            raise TypeError("SessionManager: recovery_wait_secs must be a number, got "
                            f"{type(recovery_wait_secs).__name__}")
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_feed_dict = local_init_feed_dict
        del local_init_run_options

    # -- pieces ------------------------------------------------------------------------

    def _restore_checkpoint(self, saver, checkpoint_dir, checkpoint_filename_with_path,
                            wait_for_checkpoint, max_wait_secs):
        """(a new session, whether a checkpoint was restored into it).

        Raises:
            ValueError: both checkpoint_dir and checkpoint_filename_with_path are given.
            What Saver.restore raises.
        """
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and "
                             "checkpoint_filename_with_path.")
        sess = Session(graph=self._graph)
        try:
            if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
                return sess, False
            if checkpoint_filename_with_path:
                saver.restore(sess, checkpoint_filename_with_path)
                return sess, True
            waited = 0
            state = get_checkpoint_state(checkpoint_dir)
            while not state or not state.model_checkpoint_path:
                if not (wait_for_checkpoint and waited < max_wait_secs):
                    return sess, False
                _log.info("Waiting for checkpoint to be available.")
                time.sleep(self._recovery_wait_secs)
                waited += self._recovery_wait_secs
                state = get_checkpoint_state(checkpoint_dir)
            saver.restore(sess, state.model_checkpoint_path)
            return sess, True
        except BaseException:
            sess.close()
            raise

    def _try_run_local_init_op(self, sess):
        """(True, None) after running local_init_op (or when there is none); (False,
        why) when ready_for_local_init_op reports something."""
        if self._local_init_op is None:
            return True, None
        ready, msg = _ready(self._ready_for_local_init_op, sess,
                            "Model not ready for local init")
        if not ready:
            return False, msg
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict)
        return True, None

    # -- API ---------------------------------------------------------------------------

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, init_feed_dict=None,
                        init_fn=None):
        """A session restored from the checkpoint (see the module doc) or initialized by
        init_op and init_fn, its local init op run and its ready op checked. `config`
        is accepted and ignored.

        Raises:
            ValueError: master is not '', or both checkpoint arguments are given.
            RuntimeError: nothing restores or initializes the model, or a ready check
                fails after initialization (TF1's messages, naming what is missing).
            What Saver.restore and the init ops raise.
        """
        _check_master(master, "prepare_session")
        del config
        sess, restored = self._restore_checkpoint(
            saver, checkpoint_dir, checkpoint_filename_with_path, wait_for_checkpoint,
            max_wait_secs)
        try:
            if not restored:
                if init_op is None and not init_fn and self._local_init_op is None:
                    raise RuntimeError("Model is not initialized and no init_op or init_fn "
                                       "or local_init_op was given")
                if init_op is not None:
                    sess.run(init_op, feed_dict=init_feed_dict)
                if init_fn:
                    init_fn(sess)
            ok, msg = self._try_run_local_init_op(sess)
            if not ok:
                raise RuntimeError("Init operations did not make model ready for "
                                   f"local_init.  Init op: {_maybe_name(init_op)}, init fn: "
                                   f"{init_fn}, error: {msg}")
            ok, msg = _ready(self._ready_op, sess, "Model not ready")
            if not ok:
                raise RuntimeError("Init operations did not make model ready.  Init op: "
                                   f"{_maybe_name(init_op)}, init fn: {init_fn}, "
                                   f"local_init_op: {self._local_init_op}, error: {msg}")
        except BaseException:
            sess.close()
            raise
        return sess

    def recover_session(self, master, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, local_init_feed_dict=None):
        """(session, True) when a checkpoint was restored and the session is ready;
        else (session, False), the session's variables as the restore (if any) left
        them. The local init op is always tried. `config` is accepted and ignored.

        Raises:
            ValueError: master is not '', or both checkpoint arguments are given.
            What Saver.restore raises.
        """
        _check_master(master, "recover_session")
        del config
        sess, restored = self._restore_checkpoint(
            saver, checkpoint_dir, checkpoint_filename_with_path, wait_for_checkpoint,
            max_wait_secs)
        if local_init_feed_dict is not None:
            self._local_init_feed_dict = local_init_feed_dict
        ok, msg = self._try_run_local_init_op(sess)
        if not restored:
            return sess, False
        where = checkpoint_dir or checkpoint_filename_with_path
        if not ok:
            _log.info("Restoring model from %s did not make model ready for local init: %s",
                      where, msg)
            return sess, False
        ok, msg = _ready(self._ready_op, sess, "Model not ready")
        if not ok:
            _log.info("Restoring model from %s did not make model ready: %s", where, msg)
            return sess, False
        _log.info("Restored model from %s", where)
        return sess, True

    def wait_for_session(self, master, config=None, max_wait_secs=float("Inf")):
        """A new session once its local init op ran and its ready op reports nothing.
        In TF1 another process (the chief) makes it ready; an og session shares no
        state, so one that is not ready now never will be, and this raises at once
        instead of retrying until max_wait_secs (None: forever) have passed.

        Raises:
            ValueError: master is not ''.
            DeadlineExceededError: the session is not ready (the message says why).
        """
        _check_master(master, "wait_for_session")
        del config
        sess = Session(graph=self._graph)
        try:
            ok, local_msg = self._try_run_local_init_op(sess)
            msg = None
            if ok:
                ok, msg = _ready(self._ready_op, sess, "Model not ready")
        except BaseException:
            sess.close()
            raise
        if ok:
            return sess
        sess.close()
        limit = float("Inf") if max_wait_secs is None else max_wait_secs
        raise DeadlineExceededError(
            f"Session was not ready after waiting {limit} secs (og sessions share no "
            f"state: no other process can make it ready).  Ready_for_local_init_op: "
            f"{local_msg}, ready: {msg}")

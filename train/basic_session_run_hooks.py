"""The standard session run hooks of TF1 (tf.compat.v1.train): stop at a global step,
fail or stop on a NaN loss, log tensors, save checkpoints, log global steps per second,
run final ops, feed every step; and the timer that decides when a periodic hook fires.

The hooks follow TF1's rules, step for step, so a TF1 training loop keeps its
behaviour: `CheckpointSaverHook` saves when the session is created (the restored or
initial step), then whenever `save_steps` global steps or `save_secs` seconds have
passed, and at the end unless that step was just saved. Hooks that count global steps
find the graph's global step in `begin()` (`og.train.get_global_step`) and raise
RuntimeError ("Global step should be created to use <hook>.") when there is none.

`StepCounterHook` also writes global_step/sec as a scalar summary when given a
`summary_writer` or `output_dir`, and `SummarySaverHook` writes the merged summaries
(og.summary) into an event file, as TF1's do. Differences from TF1, forced by
onegraph's own checkpoint layout: `CheckpointSaverHook` writes through
`og.train.Saver.save(sess, checkpoint_dir, global_step=step)`, whose files are named
`ckpt-<step>.og` whatever `checkpoint_basename` says, and writes no graph.pbtxt; its
MetaGraphDef event holds the graph only. Messages go to the Python logger "onegraph".
"""

from __future__ import annotations

import logging
import os
import time

import numpy as np

from ..errors import OutOfRangeError
from . import graph as _g
from ..ops.summary_encoding import scalar_summary
from .api_compat import GraphKeys
from .event_file import FileWriterCache, SessionLog
from .session_run_hook import SessionRunArgs, SessionRunHook
from .training_util import get_global_step

_log = logging.getLogger("onegraph")

SAVERS = GraphKeys.SAVERS  # the collection a default Saver is looked up in (TF1's)

# TF1 warns about a global step that does not move at most this many times
_STALE_STEP_WARNINGS = 5
# TF1's CheckpointSaverHook assumes up to this many global steps per run when it
# decides from a stale step whether the current one needs a look
_MANY_STEPS = 1000000


# -- timers ---------------------------------------------------------------------------


class SecondOrStepTimer:
    """Decides when a periodic hook fires: every `every_secs` seconds or every
    `every_steps` steps (TF1's tf.train.SecondOrStepTimer). It fires at the first step
    it is asked about, never twice for one step, and then once enough seconds or steps
    have passed since it last fired.

    Raises:
        ValueError: neither or both of every_secs and every_steps are given.
    """

    # monotonic, unlike TF1's time.time: a wall-clock jump must not fire a save
    _clock = staticmethod(time.monotonic)

    def __init__(self, every_secs=None, every_steps=None):
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self) -> None:
        """Forget when the timer last fired (it fires at the next step asked about)."""
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step) -> bool:
        """Whether the hook should fire at global step `step`. Never raises."""
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None and \
                self._clock() >= self._last_triggered_time + self._every_secs:
            return True
        return self._every_steps is not None and \
            step >= self._last_triggered_step + self._every_steps

    def update_last_triggered_step(self, step) -> tuple:
        """Record that the hook fired at `step`; (seconds, steps) since it last fired,
        or (None, None) the first time. Never raises."""
        now = self._clock()
        if self._last_triggered_time is None:
            elapsed = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self):
        """The step the timer last fired at, or None. Never raises."""
        return self._last_triggered_step


class NeverTriggerTimer:
    """A timer that never fires (for a LoggingTensorHook that logs only at the end), with
    SecondOrStepTimer's methods. Never raises."""

    def reset(self) -> None:
        """Nothing to forget."""

    def should_trigger_for_step(self, step) -> bool:
        """Always False."""
        return False

    def update_last_triggered_step(self, step) -> tuple:
        """Always (None, None)."""
        return (None, None)

    def last_triggered_step(self):
        """Always None."""
        return None


def _require_global_step(hook_name: str):
    """The default graph's global step, for a hook that counts steps.

    Raises:
        RuntimeError: the graph has no global step (TF1's message, naming the hook).
    """
    step = get_global_step()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook_name}.")
    return step


def _writer(output_dir):
    """The cached og.summary.FileWriter of `output_dir`."""
    return FileWriterCache.get(output_dir)


def _step_value(session, global_step) -> int:
    """The global step's current value in `session`."""
    return int(np.asarray(session.run(global_step)))


# -- stopping -----------------------------------------------------------------------


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches `last_step`, or `num_steps` steps
    after the global step the session started at (restored from a checkpoint, say)
    (TF1's tf.train.StopAtStepHook).

    Raises:
        ValueError: neither or both of num_steps and last_step are given.
        RuntimeError (from begin): the graph has no global step.
    """

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self) -> None:
        self._global_step = _require_global_step("StopAtStepHook")

    def after_create_session(self, session, coord) -> None:
        if self._last_step is None:
            self._last_step = _step_value(session, self._global_step) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values) -> None:
        # the step fetched with the train op may be read before its increment: only a
        # fresh read decides, and it is needed only near the end
        if int(np.asarray(run_values.results)) + 1 >= self._last_step and \
                _step_value(run_context.session, self._global_step) >= self._last_step:
            run_context.request_stop()


class NanLossDuringTrainingError(RuntimeError):
    """Raised by NanTensorHook when the loss is NaN (TF1's
    tf.train.NanLossDuringTrainingError)."""

    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Watches a loss tensor every step: when it is NaN, raises
    NanLossDuringTrainingError, or with `fail_on_nan_loss=False` logs a warning and
    requests a stop (TF1's tf.train.NanTensorHook).

    Raises (from after_run):
        NanLossDuringTrainingError: the loss is NaN and fail_on_nan_loss.
    """

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values) -> None:
        if not np.any(np.isnan(run_values.results)):
            return
        message = "Model diverged with loss = NaN."
        if self._fail_on_nan_loss:
            _log.error(message)
            raise NanLossDuringTrainingError
        _log.warning(message)
        run_context.request_stop()


# -- logging ------------------------------------------------------------------------


class LoggingTensorHook(SessionRunHook):
    """Logs the values of tensors every `every_n_iter` runs or `every_n_secs` seconds,
    and/or at the end (TF1's tf.train.LoggingTensorHook), at INFO level on the logger
    "onegraph": "tag = value, tag = value (0.012 sec)".

    Args:
        tensors: a dict {tag: tensor or name} (logged in sorted tag order) or a list
            of tensors or names (logged in that order, each tagged by itself).
        every_n_iter: log every this many runs of the MonitoredSession.
        every_n_secs: log at the first run after this many seconds.
        at_end: also log once when the session is closed.
        formatter: a function {tag: value} -> str used instead of the default line.

    Raises:
        ValueError: neither at_end nor exactly one of every_n_iter and every_n_secs is
            given, or every_n_iter <= 0.
    """

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and "
                             "every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if isinstance(tensors, dict):
            self._tag_order = sorted(tensors)
        else:
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        self._tensors = tensors
        self._formatter = formatter
        self._timer = NeverTriggerTimer() if only_at_end else SecondOrStepTimer(
            every_secs=every_n_secs, every_steps=every_n_iter)
        self._log_at_end = at_end

    def begin(self) -> None:
        self._timer.reset()
        self._iter_count = 0

    def before_run(self, run_context):
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._tensors) if self._should_trigger else None

    def after_run(self, run_context, run_values) -> None:
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session) -> None:
        if self._log_at_end:
            self._log_tensors(session.run(self._tensors))

    def _log_tensors(self, values) -> None:
        elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
        if self._formatter:
            _log.info(self._formatter(values))
            return
        with np.printoptions(suppress=True):
            stats = ", ".join(f"{tag} = {values[tag]}" for tag in self._tag_order)
        if elapsed_secs is not None:
            _log.info("%s (%.3f sec)", stats, elapsed_secs)
        else:
            _log.info("%s", stats)


class StepCounterHook(SessionRunHook):
    """Logs how many global steps per second training makes, every `every_n_steps`
    global steps or `every_n_secs` seconds, as "global_step/sec: 123.4", and writes it
    as a scalar summary tagged "global_step/sec" when it has a summary writer (TF1's
    tf.train.StepCounterHook); warns (at most 5 times) when the global step does not
    move between runs.

    Args:
        every_n_steps, every_n_secs: exactly one of them.
        output_dir: the summaries go to og.summary.FileWriterCache.get(output_dir)
            unless summary_writer is given.
        summary_writer: an og.summary.FileWriter.

    Raises:
        ValueError: not exactly one of every_n_steps and every_n_secs is given.
        RuntimeError (from begin): the graph has no global step.
    """

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be "
                             "provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps,
                                        every_secs=every_n_secs)
        self._last_global_step = None
        self._stale_warnings = 0
        self._summary_writer = summary_writer
        self._output_dir = output_dir

    def begin(self) -> None:
        self._global_step = _require_global_step("StepCounterHook")
        # after the check: a hook that cannot run leaves no event file behind
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = _writer(self._output_dir)
        self._tag = self._global_step.name.split(":")[0] + "/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values) -> None:
        stale = int(np.asarray(run_values.results))
        if self._timer.should_trigger_for_step(stale + 1):
            step = _step_value(run_context.session, self._global_step)
            if self._timer.should_trigger_for_step(step):
                elapsed_secs, elapsed_steps = self._timer.update_last_triggered_step(step)
                if elapsed_secs is not None and elapsed_secs > 0:
                    rate = elapsed_steps / elapsed_secs
                    _log.info("%s: %g", self._tag, rate)
                    if self._summary_writer is not None:
                        self._summary_writer.add_summary(
                            scalar_summary(self._tag, rate), step)
        if stale == self._last_global_step and \
                self._stale_warnings < _STALE_STEP_WARNINGS:
            self._stale_warnings += 1
            _log.warning("It seems that global step (og.train.get_global_step) has not "
                         "been increased. Current value (could be stable): %s vs "
                         "previous value: %s. You could increase the global step by "
                         "passing og.train.get_global_step() to "
                         "Optimizer.apply_gradients or Optimizer.minimize.",
                         stale, self._last_global_step)
        self._last_global_step = stale


# -- summaries ----------------------------------------------------------------------


class SummarySaverHook(SessionRunHook):
    """Writes summaries every `save_steps` global steps or `save_secs` seconds (TF1's
    tf.train.SummarySaverHook): at the first run a SessionLog START, then at each
    triggered step the value of `summary_op` (or of the scaffold's, the merge of all
    summaries) through the summary writer, flushed at the end.

    Args:
        save_steps, save_secs: exactly one of them.
        output_dir: the writer is og.summary.FileWriterCache.get(output_dir) unless
            summary_writer is given (with neither, nothing is written).
        summary_writer: an og.summary.FileWriter.
        scaffold, summary_op: exactly one of them; summary_op is a summary tensor or a
            list of them.

    Raises:
        ValueError: not exactly one of scaffold and summary_op, or of save_steps and
            save_secs, is given.
        RuntimeError (from begin): the graph has no global step.
    """

    def __init__(self, save_steps=None, save_secs=None, output_dir=None,
                 summary_writer=None, scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._next_step = None
        self._request_summary = False

    def begin(self) -> None:
        self._global_step = _require_global_step("SummarySaverHook")
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = _writer(self._output_dir)
        self._next_step = None

    def _summary_ops(self) -> list | None:
        op = self._summary_op if self._summary_op is not None else \
            self._scaffold.summary_op
        if op is None:
            return None
        return list(op) if isinstance(op, (list, tuple)) else [op]

    def before_run(self, run_context):
        self._request_summary = (self._next_step is None or
                                 self._timer.should_trigger_for_step(self._next_step))
        requests = {"global_step": self._global_step}
        if self._request_summary and self._summary_ops() is not None:
            requests["summary"] = self._summary_ops()
        return SessionRunArgs(requests)

    def after_run(self, run_context, run_values) -> None:
        if not self._summary_writer:
            return
        step = int(np.asarray(run_values.results["global_step"])) + 1
        if self._next_step is None or self._request_summary:
            step = _step_value(run_context.session, self._global_step)
        if self._next_step is None:
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), step)
        if self._request_summary:
            self._timer.update_last_triggered_step(step)
            for summary in run_values.results.get("summary", ()):
                self._summary_writer.add_summary(summary, step)
        self._next_step = step + 1

    def end(self, session) -> None:
        if self._summary_writer:
            self._summary_writer.flush()


# -- checkpoints --------------------------------------------------------------------


class CheckpointSaverListener:
    """Called by a CheckpointSaverHook around its saves (TF1's
    tf.train.CheckpointSaverListener): `begin()` once, `before_save` and `after_save`
    around every save (an `after_save` returning True requests a stop), and `end` once
    after the last save. Every method does nothing here; subclasses override them and
    raise what they raise."""

    def begin(self) -> None:
        """Called from the hook's begin()."""

    def before_save(self, session, global_step_value) -> None:
        """Called before each save of step `global_step_value`."""

    def after_save(self, session, global_step_value):
        """Called after each save; return True to request a stop."""

    def end(self, session, global_step_value) -> None:
        """Called at the end, after the last save."""


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint when the session is created, every `save_steps` global steps or
    `save_secs` seconds, and at the end (TF1's tf.train.CheckpointSaverHook).

    Saves go through `og.train.Saver.save(session, checkpoint_dir, global_step=step)`
    (atomic, rotated by the Saver's max_to_keep): files `checkpoint_dir/ckpt-<step>.og`.

    Args:
        checkpoint_dir: the directory.
        save_secs, save_steps: exactly one of them.
        saver: the og.train.Saver to save with; default the scaffold's, else the one
            Saver of the graph's "savers" collection (which a MonitoredSession's
            Scaffold fills).
        checkpoint_basename: accepted for TF1 compatibility; og's Saver names the files.
        scaffold: a Scaffold whose saver to use.
        listeners: CheckpointSaverListeners.
        save_graph_def: also write the graph (as a GraphDef and a MetaGraphDef event)
            into checkpoint_dir's event file when the session is created, as TF1.

    Each save is also a SessionLog CHECKPOINT event (naming the file written) in the
    event file of og.summary.FileWriterCache.get(checkpoint_dir), as in TF1.

    Raises:
        ValueError: both saver and scaffold are given, or not exactly one of save_secs
            and save_steps.
        RuntimeError (from begin): the graph has no global step; (from
            after_create_session) no saver is given and the "savers" collection does
            not hold exactly one.
        What Saver.save raises (OSError, DataLossError for a damaged index, ...).
    """

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None,
                 save_graph_def=True):
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = os.fspath(checkpoint_dir)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])
        self._save_graph_def = bool(save_graph_def)
        self._summary_writer = None

    def begin(self) -> None:
        self._graph = _g.get_default_graph()
        self._global_step = _require_global_step("CheckpointSaverHook")
        self._summary_writer = _writer(self._checkpoint_dir)
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord) -> None:
        step = _step_value(session, self._global_step)
        if self._save_graph_def:  # here, not in begin: other hooks' begin may add ops
            self._summary_writer.add_meta_graph(self._summary_writer.add_graph(self._graph))
        # TF1 saves at once: a run that dies before the first period has a checkpoint
        self._save(session, step)
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values) -> None:
        # the fetched step may predate this run's increment, so only a fresh read
        # decides; with save_secs it is read only once the time is up (TF1's check,
        # which allows for many steps per run)
        stale = int(np.asarray(run_values.results))
        if not self._timer.should_trigger_for_step(stale + _MANY_STEPS):
            return
        step = _step_value(run_context.session, self._global_step)
        if self._timer.should_trigger_for_step(step):
            self._timer.update_last_triggered_step(step)
            if self._save(run_context.session, step):
                run_context.request_stop()

    def end(self, session) -> None:
        step = _step_value(session, self._global_step)
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _save(self, session, step: int) -> bool:
        """Save step `step` between the listeners' calls; whether a listener asked
        to stop."""
        for listener in self._listeners:
            listener.before_save(session, step)
        _log.info("Saving checkpoints for %d into %s.", step, self._checkpoint_dir)
        path = self._get_saver().save(session, self._checkpoint_dir, global_step=step)
        self._summary_writer.add_session_log(
            SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=path or ""), step)
        stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                _log.info("A CheckpointSaverListener requested that training be "
                          "stopped. listener: %s", listener)
                stop = True
        return stop

    def _get_saver(self):
        """The saver to use (see the class docstring).

        Raises:
            RuntimeError: none is given and the "savers" collection does not hold
                exactly one.
        """
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = self._graph.get_collection(SAVERS)
        if len(savers) != 1:
            raise RuntimeError(
                f"{'No' if not savers else 'More than one'} item(s) in collection "
                f"{SAVERS!r}: give CheckpointSaverHook a saver or a scaffold"
                + ("" if not savers else ", to say which one to use"))
        self._saver = savers[0]
        return self._saver


# -- final ops and feeds ------------------------------------------------------------


class FinalOpsHook(SessionRunHook):
    """Runs `final_ops` once when the session is closed; their values are then in
    `final_ops_values` (TF1's tf.train.FinalOpsHook).

    Raises (from end):
        og.OutOfRangeError: the final ops read from an exhausted input (logged with a
            hint first, as TF1); whatever else running them raises.
    """

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        """The values of the final ops (None until end() ran them)."""
        return self._final_ops_values

    def end(self, session) -> None:
        if self._final_ops is None:
            return
        try:
            self._final_ops_values = session.run(self._final_ops,
                                                 feed_dict=self._final_ops_feed_dict)
        except (OutOfRangeError, StopIteration):
            _log.warning("An OutOfRangeError or StopIteration was raised by the ops of "
                         "FinalOpsHook: they depend on an input source that is "
                         "exhausted; final ops should only read variables.")
            raise


class FeedFnHook(SessionRunHook):
    """Adds `feed_fn()`'s dict to the feeds of every run (TF1's tf.train.FeedFnHook).

    Raises (from before_run) what feed_fn raises; the MonitoredSession raises
    RuntimeError when it feeds a tensor the caller also feeds.
    """

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


__all__ = ["CheckpointSaverHook", "CheckpointSaverListener", "FeedFnHook", "FinalOpsHook",
           "LoggingTensorHook", "NanLossDuringTrainingError", "NanTensorHook",
           "NeverTriggerTimer", "SecondOrStepTimer", "StepCounterHook", "StopAtStepHook",
           "SummarySaverHook"]

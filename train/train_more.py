"""The rest of TF1's in-process tf.train helpers: GlobalStepWaiterHook, ProfilerHook,
basic_train_loop, LooperThread, match_filenames_once and VocabInfo."""

from __future__ import annotations

import collections
import logging
import os
import threading
import time

import numpy as np

from ..errors import AbortedError
from . import graph as _g
from .api_compat import GraphKeys
from .basic_session_run_hooks import SecondOrStepTimer
from .session_config import RunOptions
from .session_run_hook import SessionRunArgs, SessionRunHook
from .training_util import get_global_step

_log = logging.getLogger("onegraph.train")


# -- hooks ----------------------------------------------------------------------------

def _global_step_or_raise(who: str):
    """The default graph's global step.

    Raises:
        RuntimeError: there is none (TF1's words, naming the hook).
    """
    step = get_global_step()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {who}.")
    return step


class GlobalStepWaiterHook(SessionRunHook):
    """Holds the first run back until the global step reaches `wait_until_step` (TF1's
    tf.train.GlobalStepWaiterHook, which lets a worker start after the chief trained a
    while). It reads the step every 0.5 s through the hook's session; in onegraph only
    another thread running that session can advance it. wait_until_step <= 0 never
    waits.

    Raises:
        TypeError: wait_until_step is not an int.
        RuntimeError (from begin): the graph has no global step.
    """

    _poll_secs = 0.5

    def __init__(self, wait_until_step):
        if isinstance(wait_until_step, bool) or \
                not isinstance(wait_until_step, (int, np.integer)):
            raise TypeError("GlobalStepWaiterHook: wait_until_step must be an int, got "
                            f"{type(wait_until_step).__name__}")
        self._wait_until_step = int(wait_until_step)

    def begin(self) -> None:
        self._worker_is_started = False
        self._global_step = _global_step_or_raise("_GlobalStepWaiterHook")

    def before_run(self, run_context):
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        _log.info("Waiting for global step %d before starting training.",
                  self._wait_until_step)
        while True:
            current = int(np.asarray(run_context.session.run(self._global_step)))
            if current >= self._wait_until_step:
                self._worker_is_started = True
                return None
            time.sleep(self._poll_secs)


class ProfilerHook(SessionRunHook):
    """Every `save_steps` steps or `save_secs` seconds, records one run's per-node
    timings and writes them as a Chrome trace (chrome://tracing, ui.perfetto.dev) to
    `output_dir/timeline-<global step>.json` (TF1's tf.train.ProfilerHook and file
    names; the trace is og.RunMetadata's, one event per executed node). The first
    run is never traced, as in TF1. show_dataflow and show_memory are accepted and
    ignored (og's trace has neither).

    Raises:
        ValueError: neither or both of save_steps and save_secs are given.
        TypeError: output_dir is not a path.
        RuntimeError (from begin): the graph has no global step.
        OSError (from after_run): the trace cannot be written.
    """

    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True,
                 show_memory=False):
        if not isinstance(output_dir, (str, bytes, os.PathLike)):
            raise TypeError("ProfilerHook: output_dir must be a path, got "
                            f"{type(output_dir).__name__}")
        self._output_file = os.path.join(os.fsdecode(output_dir), "timeline-{}.json")
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        del show_dataflow, show_memory

    def begin(self) -> None:
        self._next_step = None
        self._global_step = _global_step_or_raise("ProfilerHook")

    def before_run(self, run_context):
        self._request_summary = (self._next_step is not None and
                                 self._timer.should_trigger_for_step(self._next_step))
        options = RunOptions(trace_level=RunOptions.FULL_TRACE) \
            if self._request_summary else None
        return SessionRunArgs({"global_step": self._global_step}, options=options)

    def after_run(self, run_context, run_values) -> None:
        stale = int(np.asarray(run_values.results["global_step"]))
        if self._next_step is None:
            # the timer starts counting from the first run, which is not traced
            self._timer.update_last_triggered_step(stale)
        step = stale + 1
        if self._request_summary:
            step = int(np.asarray(run_context.session.run(self._global_step)))
            self._timer.update_last_triggered_step(step)
            run_values.run_metadata.write_trace(self._output_file.format(step))
        self._next_step = step + 1


# -- loops ------------------------------------------------------------------------------

def basic_train_loop(supervisor, train_step_fn, args=None, kwargs=None, master=""):
    """Call `train_step_fn(sess, *args, **kwargs)` until `supervisor.should_stop()`,
    inside `supervisor.managed_session(master)`; the whole loop starts over when a step
    raises og.errors.AbortedError (TF1's tf.train.basic_train_loop). Any object with
    those two methods serves as the supervisor (og has no Supervisor: see
    og.train.MonitoredTrainingSession).

    Raises:
        TypeError: train_step_fn is not callable, or args/kwargs are not a list/dict.
        What train_step_fn and the supervisor raise (but AbortedError).
    """
    if not callable(train_step_fn):
        raise TypeError("basic_train_loop: train_step_fn must be callable, got "
                        f"{type(train_step_fn).__name__}")
    args = [] if args is None else args
    kwargs = {} if kwargs is None else kwargs
    if not isinstance(args, (list, tuple)) or not isinstance(kwargs, dict):
        raise TypeError("basic_train_loop: args must be a list and kwargs a dict")
    should_retry = True
    while should_retry:
        try:
            should_retry = False
            with supervisor.managed_session(master) as sess:
                while not supervisor.should_stop():
                    train_step_fn(sess, *args, **kwargs)
        except AbortedError:
            # TF1 restarts on AbortedError (a restarted server); kept for such callers
            should_retry = True


class LooperThread(threading.Thread):
    """A daemon thread calling `target(*args, **kwargs)` (or an overridden run_loop())
    back to back, or every `timer_interval_secs` seconds (the first call at once), until
    the Coordinator `coord` is asked to stop; an exception stops the coordinator with it
    (TF1's tf.train.LooperThread). Registered with the coordinator, so coord.join()
    waits for it.

    Raises:
        ValueError: args or kwargs are given without target (TF1's check).
        TypeError: timer_interval_secs is not a number or None.
    """

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not target and (args or kwargs):
            raise ValueError("'args' and 'kwargs' argument require that you also pass "
                             "'target'")
        if timer_interval_secs is not None and (
                isinstance(timer_interval_secs, bool)
                or not isinstance(timer_interval_secs, (int, float))):
            raise TypeError("LooperThread: timer_interval_secs must be a number or None, "
                            f"got {type(timer_interval_secs).__name__}")
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        self._args = args or ()
        self._kwargs = kwargs or {}
        coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        """Start a LooperThread calling `target` and return it (raises as the class)."""
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.time()
                while not self._coord.wait_for_stop(max(next_time - time.time(), 0)):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        """Called once when the thread starts (override)."""

    def stop_loop(self):
        """Called once when the loop ends normally (override)."""

    def run_loop(self):
        """One iteration: calls target (override when no target is given)."""
        if self._target:
            self._target(*self._args, **self._kwargs)


# -- small pieces -----------------------------------------------------------------------

def match_filenames_once(pattern, name=None):
    """A local variable (collection LOCAL_VARIABLES, not trainable) holding the sorted
    paths matching the glob `pattern` when its initializer runs (TF1's
    tf.train.match_filenames_once; its default name "matching_filenames").

    Raises:
        TypeError: pattern is not a str or string tensor, or name is not a str.
    """
    from .api_io_ops import matching_files
    from .variables import Variable

    if name is not None and not isinstance(name, str):
        raise TypeError(f"match_filenames_once: name must be a str or None, got "
                        f"{type(name).__name__}")
    if not (isinstance(pattern, (str, bytes, list, tuple)) or _g._is_symbolic(pattern)):
        raise TypeError("match_filenames_once: pattern must be a glob pattern (str) or "
                        f"a string tensor, got {type(pattern).__name__}")
    g = _g.get_default_graph()
    files = matching_files(pattern)
    # og's Variable wants an initial value of known shape: it starts from an empty list
    # (validate_shape=False lets that change) and its initializer assigns the matches
    empty = g.constant(np.array([], dtype=object))
    var = Variable(empty, name=name or "matching_filenames", trainable=False,
                   validate_shape=False, collections=[GraphKeys.LOCAL_VARIABLES])
    with g.control_dependencies(None):
        var.initializer = g.op("Assign", [var.handle, files], {"validate_shape": 0}).op
    var.initial_value = files
    return var


class VocabInfo(collections.namedtuple("VocabInfo", [
        "new_vocab", "new_vocab_size", "num_oov_buckets", "old_vocab", "old_vocab_size",
        "backup_initializer", "axis"])):
    """How a variable's rows (axis 0) or columns (axis 1) map between an old and a new
    vocabulary when warm starting (TF1's tf.train.VocabInfo namedtuple). og's
    warm_start does not remap vocabularies and refuses var_name_to_vocab_info.

    Raises:
        ValueError: axis is not 0 or 1 (TF1's check and words).
    """

    __slots__ = ()

    def __new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab,
                old_vocab_size=-1, backup_initializer=None, axis=0):
        if axis != 0 and axis != 1:
            raise ValueError("The only supported values for the axis argument are 0 "
                             f"and 1.  Provided axis: {axis}")
        return super().__new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab,
                               old_vocab_size, backup_initializer, axis)

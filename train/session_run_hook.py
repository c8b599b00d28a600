"""Hooks into the steps of a `MonitoredSession`: TF1's `SessionRunHook` and the values
passed to and from it (tf.compat.v1.train.SessionRunHook, SessionRunArgs,
SessionRunContext, SessionRunValues).

A MonitoredSession calls each hook, in the order the hooks were given:

- `begin()` once, before the graph is finalized: the last chance to add ops;
- `after_create_session(session, coord)` once the Session exists and its variables are
  initialized or restored, and the queue runners are started;
- `before_run(run_context)` before every `run`; it may return `SessionRunArgs` to add
  fetches and feeds to that run;
- `after_run(run_context, run_values)` after every `run` that succeeded, with the
  results of the hook's own fetches;
- `end(session)` when the MonitoredSession is closed, unless an exception other than
  the end of the input (og.OutOfRangeError) is leaving its `with` block.

Example::

    class CountHook(SessionRunHook):
        def begin(self):
            self.runs = 0

        def after_run(self, run_context, run_values):
            self.runs += 1
            if self.runs == 100:
                run_context.request_stop()
"""

from __future__ import annotations

import collections


class SessionRunHook:
    """Base class of the hooks a `MonitoredSession` calls around session creation and
    every `run` (TF1's tf.train.SessionRunHook). Every method does nothing here;
    subclasses override those they need. The methods raise whatever the subclass
    raises, and the MonitoredSession lets it propagate."""

    def begin(self) -> None:
        """Called once before the session is created; the graph may still be changed
        (it is finalized afterwards)."""

    def after_create_session(self, session, coord) -> None:
        """Called once the session is created and initialized or restored.

        Args:
            session: the og.Session (the raw one, not the MonitoredSession).
            coord: the og.train.Coordinator of the queue runner threads.
        """

    def before_run(self, run_context):
        """Called before each `run`; returns None or a `SessionRunArgs` whose fetches
        are run along with the caller's and whose feeds are added to the caller's.
        `run_context.original_args` holds what the caller asked for."""
        return None

    def after_run(self, run_context, run_values) -> None:
        """Called after each successful `run`; `run_values.results` holds the values of
        the fetches this hook's `before_run` asked for (None if it asked for none)."""

    def end(self, session) -> None:
        """Called when the MonitoredSession is closed (not when an error other than
        og.OutOfRangeError is propagating); the session can still run ops."""


class SessionRunArgs(collections.namedtuple("SessionRunArgs",
                                            ["fetches", "feed_dict", "options"])):
    """What a hook adds to a `run` (TF1's tf.train.SessionRunArgs): `fetches` (a tensor,
    op or name, or a list/tuple/dict nesting of them, or None), `feed_dict` (a dict of
    tensor -> value, or None) and `options` (an og.RunOptions: a trace_level makes the
    MonitoredSession record the run into an og.RunMetadata, which after_run gets as
    run_values.run_metadata, as TF1's ProfilerHook asks). Never raises."""

    __slots__ = ()

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunContext:
    """What a hook is told about the current `run` (TF1's tf.train.SessionRunContext):
    the caller's `original_args` (a SessionRunArgs), the raw `session`, and a way to ask
    the MonitoredSession to stop after this run (`request_stop()`). Never raises."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self) -> SessionRunArgs:
        """The caller's fetches and feed_dict, as a SessionRunArgs."""
        return self._original_args

    @property
    def session(self):
        """The og.Session the run uses (running it does not call the hooks)."""
        return self._session

    @property
    def stop_requested(self) -> bool:
        """Whether a hook called `request_stop()` during this run."""
        return self._stop_requested

    def request_stop(self) -> None:
        """Make the MonitoredSession's `should_stop()` true once this run is done."""
        self._stop_requested = True


class SessionRunValues(collections.namedtuple("SessionRunValues",
                                              ["results", "options", "run_metadata"])):
    """What a hook gets back from a `run` (TF1's tf.train.SessionRunValues): `results`,
    the values of its own fetches in their structure (None if it asked for none);
    `options`, the caller's run options (ignored by og.Session); `run_metadata`, the
    caller's og.RunMetadata or None. Never raises."""

    __slots__ = ()


__all__ = ["SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues"]

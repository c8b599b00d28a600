"""A Session that initializes or restores itself, runs hooks around every step, and
shuts its queue runners down: TF1's `MonitoredSession`, `SingularMonitoredSession`,
`MonitoredTrainingSession`, `Scaffold` and the session creators (tf.compat.v1.train)::

    step = og.train.get_or_create_global_step()
    train_op = og.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    hooks = [StopAtStepHook(last_step=1000)]
    with MonitoredTrainingSession(checkpoint_dir="ckpt/", hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(train_op)

What happens, as in TF1:

1. Every hook's `begin()` runs (the graph may still change).
2. The session creator finalizes the `Scaffold` (default init op, local init op and
   Saver are made, then the default graph is finalized) and makes an og.Session of
   the default graph. A chief restores the latest checkpoint of `checkpoint_dir` if
   there is one, else runs the init op and init_fn; it then runs the local init op.
3. The graph's queue runners are started with a Coordinator, and every hook's
   `after_create_session(session, coord)` runs.
4. `run(fetches, feed_dict)` asks every hook's `before_run` for extra fetches and
   feeds, runs once, hands each hook its own results in `after_run`, and returns the
   caller's results only. A tensor fed by a hook and by the caller (or by two hooks)
   is a RuntimeError.
5. `should_stop()` is true once a hook requested a stop, a queue runner thread
   failed, or a run raised og.OutOfRangeError (the input is exhausted); `with` swallows
   that OutOfRangeError, so an input pipeline ending ends the loop cleanly.
6. `close()` (the end of `with`) calls every hook's `end(session)` (not when an
   exception other than OutOfRangeError is leaving the block), stops the Coordinator,
   joins the queue runner threads, closes the og.Session and un-finalizes the graph
   if it was not finalized before.

Differences from TF1: everything runs in this process, so `master` must be '' and a
worker's session cannot wait for a chief (see WorkerSessionCreator); `config` is
accepted and ignored, run `options` only ask for a trace; a session that fails is not
re-created (onegraph has no preemption errors to recover from); `should_stop()`
also turns true after an OutOfRangeError (TF1's stays false, though the next run
would fail again).
"""

from __future__ import annotations

import inspect
import logging

import numpy as np

from ..errors import OutOfRangeError
from . import graph as _g
from .api import group
from .api_compat import GraphKeys
from .basic_session_run_hooks import (SAVERS, CheckpointSaverHook, StepCounterHook,
                                      SummarySaverHook)
from .lookup import tables_initializer
from .queue_runner import QUEUE_RUNNERS, Coordinator, start_queue_runners
from .saver import Saver, latest_checkpoint
from .session import Session
from .session_run_hook import SessionRunArgs, SessionRunContext, SessionRunValues
from .variables import (global_variables, global_variables_initializer,
                        local_variables_initializer, report_uninitialized_variables)

_log = logging.getLogger("onegraph")

# stands for "the argument was not given" where TF1's default depends on other
# arguments (MonitoredTrainingSession's save_* arguments)
USE_DEFAULT = object()

_CALLER = "caller"  # the key of the caller's fetches among the hooks' in one run


# -- Scaffold -----------------------------------------------------------------------


class Scaffold:
    """The ops a MonitoredSession needs to initialize and save a model, defaulted from
    the graph when not given (TF1's tf.train.Scaffold). `finalize()` fills the gaps
    and finalizes the default graph.

    Args:
        init_op: run to initialize a model that was not restored; default
            `og.global_variables_initializer()` (or the one op of the graph's
            "init_op" collection).
        init_feed_dict: feeds for init_op.
        init_fn: called as `init_fn(scaffold, session)` after init_op.
        ready_op: an op whose value lists what is not initialized (a 1-D array, empty
            when the model is ready), checked after initialization; default
            `og.report_uninitialized_variables()` (or the "ready_op" collection's).
        ready_for_local_init_op: the same check, before local_init_op runs; default
            the global variables' report (or the collection's).
        local_init_op: run after every initialization or restore; default
            `og.local_variables_initializer()` (or the "local_init_op" collection's).
        local_init_feed_dict: feeds for local_init_op.
        summary_op: the summaries a SummarySaverHook of this scaffold writes; default
            the "summary_op" collection's one item, else og.summary.merge_all() (None
            when the graph has no summaries).
        saver: the og.train.Saver to restore with (and CheckpointSaverHook to save
            with); default the one Saver of the graph's "savers" collection, else a new
            Saver of the global variables, added to that collection.
        copy_from_scaffold: a Scaffold to take every argument not given from.

    Raises:
        TypeError: copy_from_scaffold is not a Scaffold.
    """

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None,
                 saver=None, copy_from_scaffold=None, local_init_feed_dict=None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            other = copy_from_scaffold

            def coalesce(a, b):
                return a if a is not None else b

            init_op = coalesce(init_op, other.init_op)
            init_feed_dict = coalesce(init_feed_dict, other.init_feed_dict)
            init_fn = coalesce(init_fn, other._user_init_fn)
            ready_op = coalesce(ready_op, other.ready_op)
            ready_for_local_init_op = coalesce(ready_for_local_init_op,
                                               other.ready_for_local_init_op)
            local_init_op = coalesce(local_init_op, other.local_init_op)
            local_init_feed_dict = coalesce(local_init_feed_dict,
                                            other.local_init_feed_dict)
            summary_op = coalesce(summary_op, other.summary_op)
            saver = coalesce(saver, other.saver)
        self._user_init_fn = init_fn
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self) -> "Scaffold":
        """Make the missing ops (see the class docstring), build the Saver's ops, and
        finalize the default graph; returns self. Calling it again does nothing more.

        Raises:
            RuntimeError: a collection it takes a default from holds several items.
            OneGraphError: the graph is already finalized and lacks an op this needs,
                or the Saver names variables the graph does not have.
        """
        graph = _g.get_default_graph()
        if self._init_op is None:
            self._init_op = self.get_or_default(
                "init_op", GraphKeys.INIT_OP, lambda: global_variables_initializer(graph))
        if self._ready_op is None:
            self._ready_op = self.get_or_default(
                "ready_op", GraphKeys.READY_OP, report_uninitialized_variables)
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = self.get_or_default(
                "ready_for_local_init_op", GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: report_uninitialized_variables(global_variables(graph=graph)))
        if self._local_init_op is None:
            self._local_init_op = self.get_or_default(
                "local_init_op", GraphKeys.LOCAL_INIT_OP, self.default_local_init_op)
        if self._summary_op is None:
            from .summary import merge_all  # event files only for graphs with summaries
            self._summary_op = self.get_or_default("summary_op", GraphKeys.SUMMARY_OP,
                                                   merge_all)
        if self._saver is None:
            self._saver = _default_saver(graph)
        _build_saver(self._saver, graph)
        if not graph.finalized:
            graph.finalize()
            _log.info("Graph was finalized.")
        return self

    @property
    def init_fn(self):
        """`init_fn` bound to this scaffold: a function of the session, or None."""
        if self._user_init_fn is None:
            return None
        return lambda sess: self._user_init_fn(self, sess)

    @property
    def init_op(self):
        """The init op (None before finalize() unless given)."""
        return self._init_op

    @property
    def init_feed_dict(self):
        """The feeds of init_op."""
        return self._init_feed_dict

    @property
    def ready_op(self):
        """The readiness check run after initialization, or None."""
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        """The readiness check run before local_init_op, or None."""
        return self._ready_for_local_init_op

    @property
    def local_init_op(self):
        """The local init op (None before finalize() unless given)."""
        return self._local_init_op

    @property
    def local_init_feed_dict(self):
        """The feeds of local_init_op."""
        return self._local_init_feed_dict

    @property
    def summary_op(self):
        """The summary op (None before finalize() unless given, or when the graph has
        no summaries)."""
        return self._summary_op

    @property
    def saver(self):
        """The og.train.Saver (None before finalize() unless given)."""
        return self._saver

    @staticmethod
    def get_or_default(arg_name, collection_key, default_constructor):
        """The one item of the default graph's collection `collection_key`, else a new
        one from `default_constructor()`, which is added to that collection.

        Raises:
            RuntimeError: the collection holds several items (pass the one to use as
                `arg_name` to Scaffold).
        """
        graph = _g.get_default_graph()
        item = _only_item(graph, arg_name, collection_key)
        if item is not None:
            return item
        item = default_constructor()
        if item is not None:
            graph.add_to_collection(collection_key, item)
        return item

    @staticmethod
    def default_local_init_op():
        """The default local init op: initializes the default graph's local variables
        (og.LOCAL_VARIABLES: epoch counters of input pipelines, metric totals) and its
        lookup tables (og.tables_initializer()), as TF1's Scaffold."""
        return group(local_variables_initializer(), tables_initializer())


def _traces(options) -> bool:
    """Whether run options (an og.RunOptions, or None) ask for a trace."""
    return bool(getattr(options, "trace_level", 0))


def _only_item(graph, arg_name: str, collection_key: str):
    """The single item of a collection, or None if it is empty.

    Raises:
        RuntimeError: it holds several items.
    """
    items = graph.get_collection(collection_key)
    if len(items) > 1:
        raise RuntimeError(f"More than one item in the collection {collection_key!r}. "
                           f"Please indicate which one to use by passing it to the "
                           f"Scaffold constructor as: Scaffold({arg_name}=item to use)")
    return items[0] if items else None


def _default_saver(graph):
    """The one Saver of the graph's "savers" collection, or a new Saver of its global
    variables (TF1's default saves no local variables), added there.

    Raises:
        RuntimeError: the collection holds several Savers.
    """
    saver = _only_item(graph, "saver", SAVERS)
    if saver is None:
        saver = Saver(var_list=global_variables(graph=graph), allow_empty=True)
        graph.add_to_collection(SAVERS, saver)
    return saver


def _build_saver(saver, graph) -> None:
    """Add the Saver's ops now, while the graph is open (TF1's saver.build()): a Saver
    made outside `with graph.as_default():` would otherwise add them at its first save,
    after the graph is finalized, and fail."""
    if isinstance(saver, Saver) and not graph.finalized:
        saver.build(graph)


# -- session creators ---------------------------------------------------------------


class SessionCreator:
    """Makes the og.Session of a MonitoredSession (TF1's tf.train.SessionCreator):
    subclasses implement `create_session()`."""

    def create_session(self):
        """A new, ready og.Session.

        Raises:
            NotImplementedError: always, here.
        """
        raise NotImplementedError(f"create_session is not implemented for {self}.")


def _check_master(master, who: str) -> None:
    """Refuse a master other than '' (onegraph has no remote sessions).

    Raises:
        ValueError: master is not '' or None.
    """
    if master not in ("", None):
        raise ValueError(f"{who}: master {master!r} is not supported: onegraph sessions "
                         "run in this process (give master='')")


def _not_ready_message(sess, ready_op) -> str | None:
    """None when `ready_op` is None or its value is empty; else what it reports."""
    if ready_op is None:
        return None
    value = np.asarray(sess.run(ready_op))
    if value.size == 0:
        return None
    names = [v.decode() if isinstance(v, bytes) else str(v) for v in value.ravel()]
    return "Variables not initialized: " + ", ".join(names)


def _run_local_init(sess, scaffold) -> None:
    """Run the scaffold's local init op once the model is ready for it.

    Raises:
        RuntimeError: ready_for_local_init_op reports something uninitialized.
    """
    if scaffold.local_init_op is None:
        return
    msg = _not_ready_message(sess, scaffold.ready_for_local_init_op)
    if msg is not None:
        raise RuntimeError(f"Init operations did not make model ready for local_init. "
                           f"{msg}")
    sess.run(scaffold.local_init_op, feed_dict=scaffold.local_init_feed_dict)


def _new_session(prepare):
    """An og.Session of the default graph, prepared by `prepare(sess)`; closed again
    if that raises (which it then re-raises)."""
    sess = Session(_g.get_default_graph())
    try:
        prepare(sess)
    except BaseException:
        sess.close()
        raise
    return sess


class ChiefSessionCreator(SessionCreator):
    """Makes a session that restores the latest checkpoint of `checkpoint_dir` (or the
    file `checkpoint_filename_with_path`) when there is one, and otherwise runs the
    scaffold's init op and init_fn; then runs its local init op (TF1's
    tf.train.ChiefSessionCreator).

    Args:
        scaffold: the Scaffold (default: a new one).
        master: must be '' (in process).
        config: accepted for TF1 compatibility and ignored.
        checkpoint_dir: the directory whose latest checkpoint to restore.
        checkpoint_filename_with_path: a checkpoint file to restore.

    Raises:
        ValueError: master is not '', or both checkpoint_dir and
            checkpoint_filename_with_path are given.
        From create_session: RuntimeError when the model is neither restored nor has
        anything to initialize it, or a ready check fails; what Saver.restore raises
        (DataLossError, ShapeError, OneGraphError, FileNotFoundError); what the init
        ops raise.
    """

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        _check_master(master, "ChiefSessionCreator")
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and "
                             "checkpoint_filename_with_path.")
        self._scaffold = scaffold or Scaffold()
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path

    def create_session(self):
        self._scaffold.finalize()
        return _new_session(self._prepare)

    def _prepare(self, sess) -> None:
        scaffold = self._scaffold
        if not self._restore(sess):
            if scaffold.init_op is None and scaffold.init_fn is None and \
                    scaffold.local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or "
                                   "local_init_op was given")
            if scaffold.init_op is not None:
                sess.run(scaffold.init_op, feed_dict=scaffold.init_feed_dict)
            if scaffold.init_fn is not None:
                scaffold.init_fn(sess)
        _run_local_init(sess, scaffold)
        msg = _not_ready_message(sess, scaffold.ready_op)
        if msg is not None:
            raise RuntimeError(f"Init operations did not make model ready. {msg}")

    def _restore(self, sess) -> bool:
        """Restore the checkpoint asked for, if any; whether one was restored."""
        saver = self._scaffold.saver
        if saver is None:
            return False
        path = self._checkpoint_filename_with_path
        if path is None and self._checkpoint_dir:
            path = latest_checkpoint(self._checkpoint_dir)
        if path is None:
            return False
        saver.restore(sess, path)
        _log.info("Restored model from %s", path)
        return True


class WorkerSessionCreator(SessionCreator):
    """Makes a session for a non-chief worker: runs the scaffold's local init op and
    checks its ready op, without initializing or restoring the model (TF1's
    tf.train.WorkerSessionCreator).

    In TF1 a worker's session shares variables with the chief's through the master,
    and waits up to `max_wait_secs` for the chief to initialize them. onegraph
    sessions run in this process and share no state: a worker's variables start at
    their initial values, so the session is ready at once or never, and a failed
    ready check raises at once instead of waiting.

    Raises:
        ValueError: master is not ''.
        From create_session: RuntimeError when a ready check fails; what the local
        init op raises.
    """

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        _check_master(master, "WorkerSessionCreator")
        self._scaffold = scaffold or Scaffold()
        self._max_wait_secs = max_wait_secs

    def create_session(self):
        self._scaffold.finalize()
        return _new_session(self._prepare)

    def _prepare(self, sess) -> None:
        _run_local_init(sess, self._scaffold)
        msg = _not_ready_message(sess, self._scaffold.ready_op)
        if msg is not None:
            raise RuntimeError(f"Session was not ready, and no chief can make it ready in "
                               f"onegraph (sessions share no state). {msg}")


# -- MonitoredSession -----------------------------------------------------------------


def _feed_key(sess, key):
    """What `key` of a feed_dict feeds: the tensor index in `sess` when it resolves
    (so a tensor fed by handle and by name is seen as one), else the key itself."""
    try:
        # the Session's own resolution of feed keys (handle, name or index)
        return ("tensor", sess._resolve_tensor(key))
    except Exception:  # noqa: BLE001 - unknown keys are reported by Session.run
        return ("key", key)


def _raise_if_feeds_intersect(sess, feeds1, feeds2, message: str) -> None:
    """Raises RuntimeError(message + the conflicts) when both feed one tensor."""
    seen = {_feed_key(sess, k) for k in feeds1}
    both = [k for k in feeds2 if _feed_key(sess, k) in seen]
    if both:
        raise RuntimeError(f"{message} Conflict(s): {both}")


class _MonitoredSession:
    """What MonitoredSession and SingularMonitoredSession share (see the module
    docstring); `_recoverable` says whether should_stop() turns an error a queue runner
    thread reported into True (MonitoredSession) or raises it (Singular)."""

    _recoverable = True

    def __init__(self, session_creator, hooks, stop_grace_period_secs=120):
        self._graph = _g.get_default_graph()
        self._graph_was_finalized = self._graph.finalized
        self._hooks = list(hooks or [])
        self._stop_grace_period_secs = stop_grace_period_secs
        self._sess = None
        self._coord = None
        self._hooks_requested_stop = False
        self._input_ended = False
        for hook in self._hooks:
            hook.begin()
        self._create(session_creator or ChiefSessionCreator())

    def _create(self, creator) -> None:
        """Create the session, start the queue runners and call after_create_session;
        on failure, undo what was done and re-raise."""
        try:
            self._sess = creator.create_session()
            self._coord = Coordinator(clean_stop_exception_types=())
            if self._graph.get_collection(QUEUE_RUNNERS):
                start_queue_runners(self._sess, self._coord)
            for hook in self._hooks:
                hook.after_create_session(self._sess, self._coord)
        except BaseException:
            try:
                self._shut_down()
            except Exception as e:  # noqa: BLE001 - the creation error matters more
                _log.error("Error while cleaning up a failed MonitoredSession: %s: %s",
                           type(e).__name__, e)
            raise

    @property
    def graph(self):
        """The og.Graph the session runs, or None once closed."""
        return None if self._sess is None else self._graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Run `fetches` once with the hooks' fetches and feeds added; the caller's
        results, in the structure of `fetches`.

        Args:
            fetches, feed_dict: as og.Session.run.
            options: an og.RunOptions: handed to the hooks; a trace_level (here or in
                a hook's SessionRunArgs.options) makes the run record into
                run_metadata, or a new og.RunMetadata, which the hooks get.
            run_metadata: an og.RunMetadata recording the run, or None.

        Raises:
            RuntimeError: the session is closed, a hook requested a stop before this
                run, or a tensor is fed by a hook and the caller (or by two hooks).
            TypeError: fetches is None, or a hook's before_run returned something
                other than None or a SessionRunArgs.
            og.OutOfRangeError: the input is exhausted (should_stop() is then true;
                `with` swallows it).
            What og.Session.run and the hooks raise.
        """
        sess = self._open_session("run")
        if self._hooks_requested_stop:
            raise RuntimeError("Run called even after should_stop requested.")
        if fetches is None:
            raise TypeError("MonitoredSession.run: fetches is None; give the tensors or "
                            "ops to fetch")
        run_context = SessionRunContext(SessionRunArgs(fetches, feed_dict, options), sess)
        all_fetches = {_CALLER: fetches}
        feeds, traced = self._call_before_run(sess, run_context, all_fetches, feed_dict)
        # a hook that asks for a trace (RunOptions.trace_level, TF1's contract) gets the
        # run's metadata in after_run, recorded into the caller's or a new RunMetadata
        if (traced or _traces(options)) and run_metadata is None:
            from .profiling import RunMetadata
            run_metadata = RunMetadata()
        try:
            outputs = sess.run(all_fetches, feed_dict=feeds, run_metadata=run_metadata)
        except OutOfRangeError:
            self._input_ended = True
            raise
        for hook in self._hooks:
            hook.after_run(run_context, SessionRunValues(
                results=outputs.get(hook), options=options, run_metadata=run_metadata))
        self._hooks_requested_stop = self._hooks_requested_stop or \
            run_context.stop_requested
        return outputs[_CALLER]

    def _call_before_run(self, sess, run_context, all_fetches, user_feed_dict):
        """Add each hook's fetches to `all_fetches` (keyed by the hook); (the feeds of
        the run: the caller's plus the hooks', whether a hook's options ask for a
        trace).

        Raises:
            RuntimeError: two of them feed the same tensor.
            TypeError: a hook's before_run returned something other than None or a
                SessionRunArgs.
        """
        hook_feeds, traced = {}, False
        for hook in self._hooks:
            request = hook.before_run(run_context)
            if request is None:
                continue
            if not isinstance(request, SessionRunArgs):
                raise TypeError(f"{type(hook).__name__}.before_run must return None or a "
                                f"SessionRunArgs, got {type(request).__name__}")
            traced = traced or _traces(request.options)
            if request.fetches is not None:
                all_fetches[hook] = request.fetches
            if request.feed_dict:
                _raise_if_feeds_intersect(sess, hook_feeds, request.feed_dict,
                                          "Same tensor is fed by two hooks.")
                hook_feeds.update(request.feed_dict)
        if not hook_feeds:
            return user_feed_dict, traced
        if not user_feed_dict:
            return hook_feeds, traced
        _raise_if_feeds_intersect(sess, user_feed_dict, hook_feeds,
                                  "Same tensor is fed by a SessionRunHook and user.")
        return {**hook_feeds, **user_feed_dict}, traced

    def run_step_fn(self, step_fn):
        """Call `step_fn(step_context)` once: `step_context.session` is the raw
        og.Session, `step_context.run_with_hooks(...)` is this session's `run`, and
        `step_context.request_stop()` ends the loop (it raises StopIteration, which
        `with` swallows). Returns what step_fn returns.

        Raises:
            ValueError: step_fn does not take exactly one argument `step_context`.
            RuntimeError: the session is closed.
            What step_fn raises.
        """
        names = [p for p in inspect.signature(step_fn).parameters]
        if names not in (["step_context"], ["self", "step_context"]):
            raise ValueError("`step_fn` may either have one `step_context` argument, or "
                             "`self` and `step_context` arguments if it's an instance "
                             f"method. Got {tuple(names)} instead.")
        sess = self._open_session("run_step_fn")
        return step_fn(StepContext(sess, self.run))

    def should_stop(self) -> bool:
        """Whether the loop should end: the session is closed, a hook requested a
        stop, the coordinator was asked to stop, or a run hit the end of the input.

        Raises:
            (SingularMonitoredSession only) the error a queue runner thread reported;
            a MonitoredSession returns True instead and close() raises it.
        """
        if self._sess is None:
            return True
        try:
            self._coord.raise_requested_exception()
        except Exception:
            if not self._recoverable:
                raise
            return True
        return (self._coord.should_stop() or self._hooks_requested_stop
                or self._input_ended)

    def close(self) -> None:
        """Call the hooks' end(session), then stop and join the queue runner threads
        and close the og.Session.

        Raises:
            RuntimeError: the session is already closed.
            What a hook's end() raises, and the first error a queue runner thread
            reported (the session is closed all the same).
        """
        self._close_internal(None)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and issubclass(exc_type, (OutOfRangeError, StopIteration)):
            exc_type = None  # the end of the input ends training normally, as in TF1
        self._close_internal(exc_type)
        return exc_type is None

    def _open_session(self, what: str):
        """The og.Session.

        Raises:
            RuntimeError: the MonitoredSession is closed.
        """
        if self._sess is None:
            raise RuntimeError(f"MonitoredSession.{what}: the session is closed")
        return self._sess

    def _close_internal(self, exception_type) -> None:
        if self._sess is None:
            raise RuntimeError("Session is already closed.")
        try:
            if exception_type is None:
                for hook in self._hooks:
                    hook.end(self._sess)
        finally:
            self._shut_down()

    def _shut_down(self) -> None:
        """Stop the coordinator, join its threads, close the og.Session and give the
        graph back unfinalized if it was so before (TF1's _unsafe_unfinalize).

        Raises:
            The first error a queue runner thread reported.
        """
        sess, coord = self._sess, self._coord
        self._sess = self._coord = None
        try:
            if coord is not None:
                coord.request_stop()
                coord.join(stop_grace_period_secs=self._stop_grace_period_secs,
                           ignore_live_threads=True)
        finally:
            try:
                if sess is not None:
                    sess.close()
            finally:
                if not self._graph_was_finalized:
                    self._graph._unsafe_unfinalize()


class StepContext:
    """What `run_step_fn` passes to its step function (TF1's
    MonitoredSession.StepContext): the raw `session`, `run_with_hooks` and
    `request_stop`. Never raises, except request_stop."""

    def __init__(self, session, run_with_hooks_fn):
        self._session = session
        self._run_with_hooks_fn = run_with_hooks_fn

    @property
    def session(self):
        """The raw og.Session (running it calls no hook)."""
        return self._session

    def run_with_hooks(self, *args, **kwargs):
        """The MonitoredSession's run(*args, **kwargs)."""
        return self._run_with_hooks_fn(*args, **kwargs)

    def request_stop(self):
        """End the iterations.

        Raises:
            StopIteration: always; the MonitoredSession's `with` swallows it.
        """
        raise StopIteration("step_fn has requested the iterations to stop.")


class MonitoredSession(_MonitoredSession):
    """A session that creates itself through `session_creator` (default: a
    ChiefSessionCreator), calls `hooks` around every run, and stops its queue runners
    when closed (TF1's tf.train.MonitoredSession; see the module docstring). An error a
    queue runner thread reports makes should_stop() true and is raised by close().

    Raises:
        What the hooks' begin() and after_create_session() and the session creator
        raise (RuntimeError for a hook needing a missing global step, say); the
        session, threads and graph are cleaned up first.
    """

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator, hooks, stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A MonitoredSession made by a ChiefSessionCreator from these arguments, whose
    `raw_session()` gives the og.Session (TF1's tf.train.SingularMonitoredSession).
    should_stop() raises the error a queue runner thread reported.

    Raises:
        ValueError: master is not '', or both checkpoint_dir and
            checkpoint_filename_with_path are given; and as MonitoredSession.
    """

    _recoverable = False

    def __init__(self, hooks=None, scaffold=None, master="", config=None,
                 checkpoint_dir=None, stop_grace_period_secs=120,
                 checkpoint_filename_with_path=None):
        creator = ChiefSessionCreator(
            scaffold=scaffold, master=master, config=config, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, stop_grace_period_secs)

    def raw_session(self):
        """The og.Session (None once closed); running it calls no hook."""
        return self._sess


def _resolve_save_defaults(steps, secs, default_steps, default_secs):
    """TF1's rule for a pair of (steps, secs) arguments: both left out -> the defaults;
    one given -> the other is off (None)."""
    if steps is USE_DEFAULT and secs is USE_DEFAULT:
        return default_steps, default_secs
    return (None if steps is USE_DEFAULT else steps, None if secs is USE_DEFAULT else secs)


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None,  # noqa: N802
                             scaffold=None, hooks=None, chief_only_hooks=None,
                             save_checkpoint_secs=USE_DEFAULT,
                             save_summaries_steps=USE_DEFAULT,
                             save_summaries_secs=USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100,
                             max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None, save_graph_def=True):
    """A MonitoredSession set up for training (TF1's
    tf.compat.v1.train.MonitoredTrainingSession).

    The chief (`is_chief=True`) restores the latest checkpoint of `checkpoint_dir` or
    initializes the model, and gets, in this order: `chief_only_hooks`; a
    StepCounterHook logging global_step/sec every `log_step_count_steps` steps (when
    `summary_dir` or `checkpoint_dir` is given, as in TF1); a CheckpointSaverHook into
    `checkpoint_dir` (when given) saving every `save_checkpoint_secs` seconds (default
    600) or, when `save_checkpoint_steps` is given and `save_checkpoint_secs` is not,
    every `save_checkpoint_steps` steps; then `hooks`. A worker gets a
    WorkerSessionCreator and only `hooks`. The step-based hooks need a global step
    (og.train.get_or_create_global_step()).

    Summaries go to `summary_dir` (default `checkpoint_dir`): the StepCounterHook
    writes global_step/sec there, and a SummarySaverHook (after it, before the
    CheckpointSaverHook) the scaffold's summary_op (default og.summary.merge_all())
    every `save_summaries_steps` steps (default 100) or, when only it is given,
    every `save_summaries_secs` seconds. `save_graph_def` and `config` are ignored;
    `master` must be ''.

    Raises:
        ValueError: master is not '', or save_checkpoint_secs and
            save_checkpoint_steps are both given (TF1's "Can not provide both
            every_secs and every_steps.").
        RuntimeError: a step-based hook finds no global step ("Global step should be
            created to use StepCounterHook."); and what MonitoredSession raises.
    """
    del save_graph_def  # onegraph writes no graph.pbtxt or meta graph next to checkpoints
    save_checkpoint_steps, save_checkpoint_secs = _resolve_save_defaults(
        save_checkpoint_steps, save_checkpoint_secs, None, 600)
    save_summaries_steps, save_summaries_secs = _resolve_save_defaults(
        save_summaries_steps, save_summaries_secs, 100, None)
    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config,
                                       max_wait_secs=max_wait_secs)
        return MonitoredSession(session_creator=creator, hooks=hooks or [],
                                stop_grace_period_secs=stop_grace_period_secs)
    all_hooks = list(chief_only_hooks or [])
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir,
                                  master=master, config=config)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir and log_step_count_steps and log_step_count_steps > 0:
        all_hooks.append(StepCounterHook(output_dir=summary_dir,
                                         every_n_steps=log_step_count_steps))
    if summary_dir and ((save_summaries_steps and save_summaries_steps > 0) or
                        (save_summaries_secs and save_summaries_secs > 0)):
        all_hooks.append(SummarySaverHook(scaffold=scaffold, save_steps=save_summaries_steps,
                                          save_secs=save_summaries_secs,
                                          output_dir=summary_dir))
    if checkpoint_dir and ((save_checkpoint_secs and save_checkpoint_secs > 0) or
                           (save_checkpoint_steps and save_checkpoint_steps > 0)):
        all_hooks.append(CheckpointSaverHook(checkpoint_dir,
                                             save_steps=save_checkpoint_steps,
                                             save_secs=save_checkpoint_secs,
                                             scaffold=scaffold))
    all_hooks.extend(hooks or [])
    return MonitoredSession(session_creator=creator, hooks=all_hooks,
                            stop_grace_period_secs=stop_grace_period_secs)


__all__ = ["ChiefSessionCreator", "MonitoredSession", "MonitoredTrainingSession",
           "Scaffold", "SessionCreator", "SingularMonitoredSession", "StepContext",
           "WorkerSessionCreator"]

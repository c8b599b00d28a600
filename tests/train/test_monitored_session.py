"""MonitoredSession, MonitoredTrainingSession, Scaffold and the basic session run hooks
against TF1's (tf.compat.v1.train): when checkpoints are written and what a second
session restores, the order hooks are called in and what each sees, feed conflicts,
the end of an input pipeline, NaN losses, logging, final ops, and that closing (also
on an exception) leaves no thread behind.

The TF1 figures are in data/tf1_monitored_session_reference.json (its "_how_obtained"
says how they were recorded)."""

import json
import logging
import os
import threading
import time

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import OneGraphError, OutOfRangeError
from onegraph.train.basic_session_run_hooks import (
    CheckpointSaverHook, CheckpointSaverListener, FeedFnHook, FinalOpsHook,
    LoggingTensorHook, NanLossDuringTrainingError, NanTensorHook, SecondOrStepTimer,
    StepCounterHook, StopAtStepHook)
from onegraph.train.input_pipeline import limit_epochs
from onegraph.train.monitored_session import (
    ChiefSessionCreator, MonitoredSession, MonitoredTrainingSession, Scaffold,
    SingularMonitoredSession, WorkerSessionCreator)
from onegraph.train.queue_runner import QueueRunner, add_queue_runner
from onegraph.train.saver import Saver, checkpoints, latest_checkpoint
from onegraph.train.session_run_hook import SessionRunArgs, SessionRunHook

pytestmark = pytest.mark.timeout(60)

with open(os.path.join(os.path.dirname(__file__), "data",
                       "tf1_monitored_session_reference.json")) as _f:
    TF1 = json.load(_f)

# MonitoredTrainingSession arguments that keep the StepCounterHook out of a test
QUIET = {"log_step_count_steps": None}


def _counter_graph():
    """The reference graph: a global step and w = 1.0; train_op adds 1 to both."""
    g = og.Graph()
    with g.as_default():
        gs = og.train.get_or_create_global_step()
        w = og.Variable(np.float32(1.0), name="w")
        train_op = og.group(w.assign_add(np.float32(1.0)), gs.assign_add(np.int64(1)))
    return g, gs, w, train_op


def _steps(directory):
    """The global steps of the checkpoints recorded in `directory`, oldest first."""
    return [int(os.path.basename(p)[len("ckpt-"):-len(".og")])
            for p in checkpoints(directory)]


def _wait_for(condition, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


class RecordingHook(SessionRunHook):
    """Logs every call as [name, method(, results)]; may fetch, feed and stop."""

    def __init__(self, name, log, fetches=None, feed_dict=None, stop_after=None):
        self.name, self.log = name, log
        self.fetches, self.feed_dict, self.stop_after = fetches, feed_dict, stop_after
        self.runs = 0

    def begin(self):
        self.log.append([self.name, "begin"])

    def after_create_session(self, session, coord):
        self.log.append([self.name, "after_create_session"])

    def before_run(self, run_context):
        self.log.append([self.name, "before_run"])
        return SessionRunArgs(self.fetches, self.feed_dict)

    def after_run(self, run_context, run_values):
        results = run_values.results
        if isinstance(results, dict):
            results = {k: float(v) for k, v in results.items()}
        self.log.append([self.name, "after_run", results])
        self.runs += 1
        if self.stop_after is not None and self.runs >= self.stop_after:
            run_context.request_stop()

    def end(self, session):
        self.log.append([self.name, "end"])


class RecordingListener(CheckpointSaverListener):
    def __init__(self):
        self.events = []

    def begin(self):
        self.events.append("begin")

    def before_save(self, session, global_step_value):
        self.events.append(["before_save", global_step_value])

    def after_save(self, session, global_step_value):
        self.events.append(["after_save", global_step_value])

    def end(self, session, global_step_value):
        self.events.append(["end", global_step_value])


# -- stopping and checkpoints, against TF1 -----------------------------------------------


def test_stop_at_step_last_step_ends_the_loop_exactly_there():
    g, gs, w, train_op = _counter_graph()
    final = FinalOpsHook([gs, w])
    with g.as_default():
        with MonitoredTrainingSession(hooks=[StopAtStepHook(last_step=7), final],
                                      **QUIET) as sess:
            runs = 0
            while not sess.should_stop():
                sess.run(train_op)
                runs += 1
    assert runs == 7
    assert [int(final.final_ops_values[0]), float(final.final_ops_values[1])] == [7, 8.0]


def test_checkpoints_are_saved_at_tf1s_steps_and_a_second_session_resumes(tmp_path):
    d = str(tmp_path / "ckpt")
    ref = TF1["mts_save_steps_3_last_step_10"]
    g, gs, w, train_op = _counter_graph()
    with g.as_default():
        with MonitoredTrainingSession(checkpoint_dir=d, save_checkpoint_steps=3,
                                      hooks=[StopAtStepHook(last_step=10)], **QUIET) as sess:
            runs = 0
            while not sess.should_stop():
                sess.run(train_op)
                runs += 1
    assert runs == ref["train_runs"]
    assert _steps(d) == ref["checkpoint_steps"]  # [0, 3, 6, 9, 10]
    assert latest_checkpoint(d) == os.path.join(d, f"ckpt-{ref['latest_step']}.og")

    ref = TF1["mts_resume_num_steps_4"]
    g, gs, w, train_op = _counter_graph()  # a new graph: values come from the checkpoint
    with g.as_default():
        with MonitoredTrainingSession(checkpoint_dir=d, save_checkpoint_steps=3,
                                      hooks=[StopAtStepHook(num_steps=4)], **QUIET) as sess:
            step, value = sess.run([gs, w])
            runs = 0
            while not sess.should_stop():
                sess.run(train_op)
                runs += 1
    assert [int(step), float(value)] == [ref["restored_global_step"], ref["restored_w"]]
    assert runs == ref["train_runs"]  # num_steps counts from the restored step
    assert _steps(d) == ref["checkpoint_steps"]  # [6, 9, 10, 13, 14]


def test_checkpoint_saver_listener_calls_match_tf1(tmp_path):
    ref = TF1["saver_hook_save_steps_3_last_step_7"]
    g, gs, w, train_op = _counter_graph()
    listener = RecordingListener()
    with g.as_default():
        hooks = [StopAtStepHook(last_step=7),
                 CheckpointSaverHook(str(tmp_path), save_steps=3, listeners=[listener])]
        with MonitoredSession(hooks=hooks) as sess:
            while not sess.should_stop():
                sess.run(train_op)
    assert listener.events == ref["listener_events"]
    assert _steps(str(tmp_path)) == ref["checkpoint_steps"]


def test_listener_after_save_returning_true_requests_a_stop(tmp_path):
    class StopAtSix(RecordingListener):
        def after_save(self, session, global_step_value):
            super().after_save(session, global_step_value)
            return global_step_value >= 6

    g, gs, w, train_op = _counter_graph()
    with g.as_default():
        listener = StopAtSix()
        hook = CheckpointSaverHook(str(tmp_path), save_steps=3, listeners=[listener])
        with MonitoredSession(hooks=[hook]) as sess:
            runs = 0
            while not sess.should_stop():
                sess.run(train_op)
                runs += 1
    assert runs == 6
    assert _steps(str(tmp_path)) == [0, 3, 6]
    # step 6 was just saved: end() does not save it again
    assert listener.events[-5:] == [["before_save", 3], ["after_save", 3],
                                    ["before_save", 6], ["after_save", 6], ["end", 6]]


def test_save_secs_saves_when_the_time_is_up(tmp_path, monkeypatch):
    now = [100.0]
    monkeypatch.setattr(SecondOrStepTimer, "_clock", staticmethod(lambda: now[0]))
    g, gs, w, train_op = _counter_graph()
    with g.as_default():
        hook = CheckpointSaverHook(str(tmp_path), save_secs=60)
        with SingularMonitoredSession(hooks=[StopAtStepHook(last_step=6), hook]) as sess:
            while not sess.should_stop():
                sess.run(train_op)
                if int(sess.raw_session().run(gs)) == 2:
                    now[0] += 61  # the next run's after_run sees the time up
    assert _steps(str(tmp_path)) == [0, 3, 6]


def test_both_checkpoint_secs_and_steps_is_tf1s_value_error(tmp_path):
    g, gs, w, train_op = _counter_graph()
    with g.as_default():
        with pytest.raises(ValueError) as e:
            MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_checkpoint_steps=3,
                                     save_checkpoint_secs=10)
    assert f"{type(e.value).__name__}: {e.value}" == \
        TF1["both_save_checkpoint_secs_and_steps"]
    assert not g.finalized


def test_default_checkpoint_secs_saves_at_creation_and_end_only(tmp_path):
    g, gs, w, train_op = _counter_graph()
    with g.as_default():
        with MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                      hooks=[StopAtStepHook(last_step=4)], **QUIET) as sess:
            while not sess.should_stop():
                sess.run(train_op)
    assert _steps(str(tmp_path)) == [0, 4]  # 600 s never pass here


def test_linear_regression_trains_saves_and_restores_in_a_singular_session(tmp_path):
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(32, 2)).astype(np.float32)
    ys = xs @ np.array([[2.0], [-1.0]], np.float32) + 0.5

    def build():
        g = og.Graph()
        with g.as_default():
            gs = og.train.get_or_create_global_step()
            x = og.constant(xs)
            wv = og.Variable(np.zeros((2, 1), np.float32), name="w")
            b = og.Variable(np.zeros((1,), np.float32), name="b")
            loss = og.reduce_mean(og.square(og.matmul(x, wv) + b - ys))
            train = og.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
        return g, gs, wv, loss, train

    d = str(tmp_path)
    g, gs, wv, loss, train = build()
    final = FinalOpsHook({"w": wv, "loss": loss})
    with g.as_default():
        with MonitoredTrainingSession(checkpoint_dir=d, save_checkpoint_steps=25,
                                      hooks=[StopAtStepHook(last_step=60), final],
                                      **QUIET) as sess:
            first = float(sess.run(loss))
            while not sess.should_stop():
                sess.run(train)
    assert final.final_ops_values["loss"] < first / 100
    assert _steps(d) == [0, 25, 50, 60]

    g, gs, wv, loss, train = build()
    with g.as_default():
        with SingularMonitoredSession(checkpoint_dir=d) as sess:
            raw = sess.raw_session()
            assert int(raw.run(gs)) == 60
            np.testing.assert_array_equal(raw.run(wv), final.final_ops_values["w"])
        assert sess.raw_session() is None


def test_checkpoint_filename_with_path_restores_that_file(tmp_path):
    d = str(tmp_path)
    g, gs, w, train_op = _counter_graph()
    with g.as_default():
        hook = CheckpointSaverHook(d, save_steps=2)
        with MonitoredSession(hooks=[StopAtStepHook(last_step=5), hook]) as sess:
            while not sess.should_stop():
                sess.run(train_op)
    g, gs, w, train_op = _counter_graph()
    with g.as_default():
        with pytest.raises(ValueError, match="Can not provide both"):
            ChiefSessionCreator(checkpoint_dir=d,
                                checkpoint_filename_with_path=os.path.join(d, "ckpt-2.og"))
        creator = ChiefSessionCreator(
            checkpoint_filename_with_path=os.path.join(d, "ckpt-2.og"))
        with MonitoredSession(session_creator=creator) as sess:
            assert [int(v) for v in sess.run([gs, w])] == [2, 3]


# -- hooks around run -------------------------------------------------------------------


def test_hook_call_order_and_results_match_tf1():
    g = og.Graph()
    with g.as_default():
        a = og.placeholder(og.float32, [], name="a")
        b = og.placeholder(og.float32, [], name="b")
        c = a + b
        c10 = c * 10.0
        log = []
        h1 = RecordingHook("h1", log, fetches={"c": c}, feed_dict={b: 2.0})
        h2 = RecordingHook("h2", log, stop_after=2)
        results = []
        with MonitoredSession(hooks=[h1, h2]) as sess:
            while not sess.should_stop():
                results.append(float(sess.run(c10, feed_dict={a: 1.0})))
            with pytest.raises(RuntimeError) as e:
                sess.run(c)
    assert results == TF1["caller_results"]  # [30.0, 30.0]: the hook's feed of b counts
    assert log == TF1["hook_call_order"]
    assert f"RuntimeError: {e.value}" == TF1["run_after_hook_stop"]


def test_caller_results_keep_their_structure_and_hooks_get_their_own():
    g = og.Graph()
    with g.as_default():
        a = og.placeholder(og.float32, [], name="a")
        doubled, tripled = a * 2.0, a * 3.0
        log = []
        hook = RecordingHook("h", log, fetches={"t": tripled})
        with MonitoredSession(hooks=[hook]) as sess:
            out = sess.run({"x": [doubled, (a,)]}, feed_dict={a: 2.0})
    assert isinstance(out, dict) and isinstance(out["x"], list)
    assert isinstance(out["x"][1], tuple)
    assert float(out["x"][0]) == 4.0 and float(out["x"][1][0]) == 2.0
    assert log[3] == ["h", "after_run", {"t": 6.0}]


def test_feed_conflicts_raise_runtime_error():
    g = og.Graph()
    with g.as_default():
        a = og.placeholder(og.float32, [], name="a")
        b = og.placeholder(og.float32, [], name="b")
        c = a + b
        with MonitoredSession(hooks=[RecordingHook("h", [], feed_dict={a: 2.0})]) as sess:
            with pytest.raises(RuntimeError) as e:
                sess.run(c, feed_dict={a: 1.0, b: 1.0})
            assert f"RuntimeError: {e.value}".startswith(
                TF1["feed_conflict"].replace("[...]", ""))
            with pytest.raises(RuntimeError, match="fed by a SessionRunHook and user"):
                sess.run(c, feed_dict={"a": 1.0, b: 1.0})  # the same tensor by name
            assert float(sess.run(c, feed_dict={b: 1.0})) == 3.0  # no conflict
        two = [FeedFnHook(lambda: {a: 1.0}), FeedFnHook(lambda: {a: 2.0})]
        with MonitoredSession(hooks=two) as sess:
            with pytest.raises(RuntimeError, match="Same tensor is fed by two hooks"):
                sess.run(c, feed_dict={b: 1.0})


def test_feed_fn_hook_feeds_every_run():
    g = og.Graph()
    with g.as_default():
        a = og.placeholder(og.float32, [], name="a")
        doubled = a * 2.0
        values = iter([1.0, 5.0])
        with MonitoredSession(hooks=[FeedFnHook(lambda: {a: next(values)})]) as sess:
            assert [float(sess.run(doubled)) for _ in range(2)] == [2.0, 10.0]


def test_a_before_run_returning_something_else_is_a_type_error():
    class Bad(SessionRunHook):
        def before_run(self, run_context):
            return [1]

    g, gs, w, train_op = _counter_graph()
    with g.as_default():
        with MonitoredSession(hooks=[Bad()]) as sess:
            with pytest.raises(TypeError, match="SessionRunArgs"):
                sess.run(train_op)


def test_run_step_fn_runs_with_hooks_and_request_stop_ends_the_with_block():
    g, gs, w, train_op = _counter_graph()
    log = []
    with g.as_default():
        with MonitoredSession(hooks=[RecordingHook("h", log)]) as sess:
            def step_fn(step_context):
                step_context.run_with_hooks(train_op)
                if int(step_context.session.run(gs)) >= 3:
                    step_context.request_stop()
                return "ran"

            results = []
            while not sess.should_stop():
                results.append(sess.run_step_fn(step_fn))
            with pytest.raises(ValueError, match="step_context"):
                sess.run_step_fn(lambda ctx: None)
    assert results == ["ran", "ran"]  # the third call raised StopIteration, swallowed
    assert [e[1] for e in log].count("after_run") == 3 and log[-1] == ["h", "end"]


# -- the end of the input ---------------------------------------------------------------


def _epoch_queue_graph(num_epochs):
    """The reference input: [1, 2, 3] enqueued `num_epochs` times by a queue runner."""
    g = og.Graph()
    with g.as_default():
        og.train.get_or_create_global_step()
        q = og.FIFOQueue(10, [og.int64], shapes=[[]], name="q")
        values = limit_epochs(np.array([1, 2, 3], np.int64), num_epochs) \
            if num_epochs else og.constant(np.array([1, 2, 3], np.int64))
        add_queue_runner(QueueRunner(q, [q.enqueue_many([values])]))
        value = q.dequeue()
    return g, value


def test_an_exhausted_input_ends_the_loop_cleanly():
    start = threading.active_count()
    g, value = _epoch_queue_graph(num_epochs=2)
    log, got = [], []
    with g.as_default():
        sess = MonitoredSession(hooks=[RecordingHook("h", log)])
        with sess:
            while not sess.should_stop():
                got.append(int(sess.run(value)))
    assert got == TF1["limit_epochs_2_values_before_out_of_range"]  # [1, 2, 3, 1, 2, 3]
    assert [e[1] for e in log][-1] == "end"  # out of range is a normal end, as in TF1
    assert [e[1] for e in TF1["hook_log_when_out_of_range_leaves_with"]][-1] == "end"
    assert sess.should_stop() is TF1["should_stop_after_close"]
    assert threading.active_count() == start
    assert not g.finalized


def test_should_stop_is_true_after_out_of_range():
    g, value = _epoch_queue_graph(num_epochs=1)
    with g.as_default():
        with MonitoredSession() as sess:
            with pytest.raises(OutOfRangeError):
                for _ in range(5):
                    sess.run(value)
            assert sess.should_stop()


def test_a_failing_queue_runner_thread_stops_the_loop_and_close_raises_its_error():
    start = threading.active_count()
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(4, [og.float32], shapes=[[]], name="q")
        never_fed = og.placeholder(og.float32, [], name="never_fed")
        add_queue_runner(QueueRunner(q, [q.enqueue([never_fed])]))
        sess = MonitoredSession()
        _wait_for(sess.should_stop)  # the thread's error makes it true
        with pytest.raises(Exception) as e:
            sess.close()
        assert not isinstance(e.value, (OutOfRangeError, RuntimeError))

        singular = SingularMonitoredSession()

        def should_stop_raises():
            try:
                singular.should_stop()
            except type(e.value):
                return True
            return False

        _wait_for(should_stop_raises)  # raised, not turned into True
        with pytest.raises(type(e.value)):
            singular.close()
    assert threading.active_count() == start


# -- errors -----------------------------------------------------------------------------


def test_nan_tensor_hook_raises_and_end_is_skipped():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [], name="x")
        loss = og.log(x)
        log = []
        with pytest.raises(NanLossDuringTrainingError, match="NaN loss during training"):
            with MonitoredSession(hooks=[NanTensorHook(loss), RecordingHook("h", log)]) \
                    as sess:
                assert float(sess.run(loss, feed_dict={x: 1.0})) == 0.0
                sess.run(loss, feed_dict={x: -1.0})
    assert "end" not in [e[1] for e in log]


def test_nan_tensor_hook_without_failing_warns_and_stops(caplog):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [], name="x")
        with caplog.at_level(logging.WARNING, logger="onegraph"):
            with MonitoredSession(hooks=[NanTensorHook(x, fail_on_nan_loss=False)]) as sess:
                sess.run(x, feed_dict={x: 1.0})
                assert not sess.should_stop()
                sess.run(x, feed_dict={x: np.nan})
                assert sess.should_stop()
    assert "Model diverged with loss = NaN." in caplog.messages


def test_an_exception_in_the_with_block_propagates_and_closes_everything():
    start = threading.active_count()
    g, value = _epoch_queue_graph(num_epochs=None)  # an endless input
    log = []
    with g.as_default():
        with pytest.raises(ValueError, match="boom"):
            with SingularMonitoredSession(hooks=[RecordingHook("h", log)]) as sess:
                raw = sess.raw_session()
                assert int(sess.run(value)) == 1
                assert threading.active_count() > start  # the queue runner runs
                raise ValueError("boom")
    assert log == [["h", "begin"], ["h", "after_create_session"],
                   ["h", "before_run"], ["h", "after_run", None]]
    assert [e[1] for e in TF1["hook_log_when_exception_leaves_with"]] == \
        ["begin", "after_create_session"]  # TF1 skips end() too
    assert raw.closed and sess.should_stop()
    assert threading.active_count() == start
    assert not g.finalized
    with pytest.raises(RuntimeError, match="already closed"):
        sess.close()


def test_hooks_that_need_a_global_step_say_so():
    g = og.Graph()
    with g.as_default():
        op = og.constant(1.0)
        with pytest.raises(RuntimeError) as e:
            MonitoredSession(hooks=[StopAtStepHook(last_step=3)])
        assert f"RuntimeError: {e.value}" == TF1["stop_at_step_hook_without_global_step"]
        with pytest.raises(RuntimeError, match="to use StepCounterHook"):
            MonitoredTrainingSession(checkpoint_dir="unused")
        with pytest.raises(RuntimeError, match="to use SummarySaverHook"):
            MonitoredTrainingSession(checkpoint_dir="unused", log_step_count_steps=None)
        with pytest.raises(RuntimeError, match="to use CheckpointSaverHook"):
            MonitoredTrainingSession(checkpoint_dir="unused", log_step_count_steps=None,
                                     save_summaries_steps=None)
        with MonitoredTrainingSession() as sess:  # no step-based hook: no step needed
            assert float(sess.run(op)) == 1.0
    assert not os.path.exists("unused")


def test_a_failing_after_create_session_leaves_nothing_running():
    class Fails(SessionRunHook):
        def after_create_session(self, session, coord):
            raise KeyError("nope")

    start = threading.active_count()
    g, value = _epoch_queue_graph(num_epochs=None)
    with g.as_default():
        with pytest.raises(KeyError):
            MonitoredSession(hooks=[Fails()])
    assert threading.active_count() == start
    assert not g.finalized


def test_master_must_be_local():
    g, gs, w, train_op = _counter_graph()
    with g.as_default():
        with pytest.raises(ValueError, match="master"):
            MonitoredTrainingSession(master="grpc://localhost:2222")


# -- logging and final ops --------------------------------------------------------------


def test_logging_tensor_hook_logs_every_n_iter_and_at_end(caplog):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [], name="x")
        y = x * 2.0
        hook = LoggingTensorHook({"x": x, "y": y}, every_n_iter=2)
        with caplog.at_level(logging.INFO, logger="onegraph"):
            with MonitoredSession(hooks=[hook]) as sess:
                for i in range(5):
                    sess.run(y, feed_dict={x: float(i)})
    logged = [r.getMessage() for r in caplog.records
              if r.name == "onegraph" and "x = " in r.getMessage()]
    assert [m.split(" (")[0] for m in logged] == ["x = 0.0, y = 0.0", "x = 2.0, y = 4.0",
                                                  "x = 4.0, y = 8.0"]
    assert logged[0] == "x = 0.0, y = 0.0" and logged[1].endswith(" sec)")
    with pytest.raises(ValueError, match="exactly one of every_n_iter"):
        LoggingTensorHook([y])
    with pytest.raises(ValueError):
        LoggingTensorHook([y], every_n_iter=0)


def test_logging_tensor_hook_at_end_reads_the_feeds_it_gets(caplog):
    g, gs, w, train_op = _counter_graph()
    with g.as_default():
        hook = LoggingTensorHook({"w": w}, at_end=True, formatter=lambda v: f"final {v['w']}")
        with caplog.at_level(logging.INFO, logger="onegraph"):
            with MonitoredSession(hooks=[hook]) as sess:
                for _ in range(3):
                    sess.run(train_op)
    assert [m for m in caplog.messages if m.startswith("final")] == ["final 4.0"]


def test_step_counter_hook_logs_global_steps_per_second(caplog):
    g, gs, w, train_op = _counter_graph()
    with g.as_default():
        with caplog.at_level(logging.INFO, logger="onegraph"):
            with MonitoredSession(hooks=[StepCounterHook(every_n_steps=2)]) as sess:
                for _ in range(5):
                    sess.run(train_op)
                sess.run(w)  # the hooks see steps 0..4, then 5 twice: a warning
                sess.run(w)
    rates = [m for m in caplog.messages if m.startswith("global_step/sec: ")]
    assert len(rates) == 2  # steps 3 and 5 (step 1 starts the clock)
    assert all(float(m.split(": ")[1]) > 0 for m in rates)
    assert any("has not been increased" in m for m in caplog.messages)
    with pytest.raises(ValueError, match="exactly one"):
        StepCounterHook(every_n_steps=None)


def test_final_ops_hook_values():
    g, gs, w, train_op = _counter_graph()
    with g.as_default():
        x = og.placeholder(og.float32, [], name="x")
        hook = FinalOpsHook({"w": w, "wx": w * x}, final_ops_feed_dict={x: 10.0})
        with MonitoredSession(hooks=[hook]) as sess:
            assert hook.final_ops_values is None
            for _ in range(3):
                sess.run(train_op)
    assert {k: float(v) for k, v in hook.final_ops_values.items()} == \
        {"w": 4.0, "wx": 40.0}


# -- Scaffold and session creators ----------------------------------------------------


def test_graph_is_finalized_inside_and_given_back_afterwards():
    g, gs, w, train_op = _counter_graph()
    with g.as_default():
        with MonitoredSession() as sess:
            assert g.finalized
            with pytest.raises(OneGraphError, match="finalized"):
                og.constant(1.0)
            assert sess.graph is g
        assert not g.finalized and sess.graph is None
        g.finalize()
        with MonitoredSession():
            pass
        assert g.finalized  # it was finalized before: it stays so


def test_scaffold_init_op_feed_and_init_fn():
    g = og.Graph()
    with g.as_default():
        start = og.placeholder(og.float32, [], name="start")
        v = og.Variable(np.float32(0.0), name="v")
        init = v.assign(start).op
        calls = []
        scaffold = Scaffold(init_op=init, init_feed_dict={start: 5.0},
                            init_fn=lambda scaffold_, sess: calls.append(scaffold_))
        copy = Scaffold(copy_from_scaffold=scaffold)
        with SingularMonitoredSession(scaffold=copy) as sess:
            assert float(sess.run(v)) == 5.0
    assert calls == [copy]
    with pytest.raises(TypeError):
        Scaffold(copy_from_scaffold=object())


def test_the_local_init_op_runs_after_a_restore(tmp_path):
    g, gs, w, train_op = _counter_graph()
    with g.as_default():
        # a tensor initial value: the variable has a value only once its initializer
        # (here the local init op) has run
        local = og.Variable(og.constant(np.float32(3.0)) * 1.0, name="local",
                            trainable=False, collections=[og.GraphKeys.LOCAL_VARIABLES])
        bump = local.assign_add(np.float32(1.0))
        with MonitoredTrainingSession(checkpoint_dir=str(tmp_path), **QUIET) as sess:
            sess.run([train_op, bump])
        assert [os.path.basename(p) for p in checkpoints(str(tmp_path))] == \
            ["ckpt-0.og", "ckpt-1.og"]
        with MonitoredTrainingSession(checkpoint_dir=str(tmp_path), **QUIET) as sess:
            # global variables restored; the local one (not saved) starts again
            assert [float(v) for v in sess.run([gs, w, local])] == [1.0, 2.0, 3.0]


def test_a_ready_op_reporting_uninitialized_variables_fails_creation():
    g = og.Graph()
    with g.as_default():
        not_ready = og.constant(np.array([b"w"], dtype=object))
        with pytest.raises(RuntimeError, match="did not make model ready.*w"):
            MonitoredSession(session_creator=ChiefSessionCreator(
                scaffold=Scaffold(ready_op=not_ready)))
        with pytest.raises(RuntimeError, match="not ready"):
            MonitoredSession(session_creator=WorkerSessionCreator(
                scaffold=Scaffold(ready_op=not_ready)))
    assert not g.finalized


def test_worker_session_neither_restores_nor_saves(tmp_path):
    g, gs, w, train_op = _counter_graph()
    with g.as_default():
        Saver().save(og.Session(g), str(tmp_path), global_step=7)
    g, gs, w, train_op = _counter_graph()
    with g.as_default():
        final = FinalOpsHook(gs)
        with MonitoredTrainingSession(is_chief=False, checkpoint_dir=str(tmp_path),
                                      hooks=[StopAtStepHook(num_steps=2), final]) as sess:
            assert int(sess.run(gs)) == 0
            while not sess.should_stop():
                sess.run(train_op)
    assert int(final.final_ops_values) == 2
    assert _steps(str(tmp_path)) == [7]


def test_the_scaffold_builds_a_saver_made_outside_as_default(tmp_path):
    g, gs, w, train_op = _counter_graph()
    saver = Saver(defer_build=True)  # ops not added yet: the scaffold must add them
    with g.as_default():
        scaffold = Scaffold(saver=saver)
        with MonitoredSession(hooks=[CheckpointSaverHook(str(tmp_path), save_steps=1,
                                                         scaffold=scaffold)],
                              session_creator=ChiefSessionCreator(scaffold=scaffold)) as s:
            s.run(train_op)
    assert _steps(str(tmp_path)) == [0, 1]


def test_second_or_step_timer():
    timer = SecondOrStepTimer(every_steps=3)
    assert timer.should_trigger_for_step(5)
    assert timer.update_last_triggered_step(5) == (None, None)
    assert not timer.should_trigger_for_step(5)
    assert not timer.should_trigger_for_step(7) and timer.should_trigger_for_step(8)
    assert timer.update_last_triggered_step(8)[1] == 3
    assert timer.last_triggered_step() == 8
    with pytest.raises(ValueError):
        SecondOrStepTimer()
    with pytest.raises(ValueError):
        SecondOrStepTimer(every_secs=1, every_steps=1)


def test_checkpoint_saver_hook_without_a_saver_to_find_says_so(tmp_path):
    g, gs, w, train_op = _counter_graph()
    with g.as_default():
        creator = ChiefSessionCreator(scaffold=Scaffold(saver=Saver([w])))
        with pytest.raises(RuntimeError, match="collection 'savers'"):
            MonitoredSession(session_creator=creator,
                             hooks=[CheckpointSaverHook(str(tmp_path), save_steps=1)])
        with pytest.raises(ValueError, match="both saver and scaffold"):
            CheckpointSaverHook(str(tmp_path), save_steps=1, saver=Saver([w]),
                                scaffold=Scaffold())
    assert not g.finalized and checkpoints(str(tmp_path)) == []


def test_the_tf1_training_loop_through_og_train(tmp_path):
    g = og.Graph()
    with g.as_default():
        step = og.train.get_or_create_global_step()
        w = og.Variable(np.float32(4.0), name="w")
        loss = og.square(w)
        train_op = og.train.GradientDescentOptimizer(0.25).minimize(loss, global_step=step)
        hooks = [og.train.StopAtStepHook(last_step=3)]
        with og.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                               hooks=hooks) as sess:
            while not sess.should_stop():
                sess.run(train_op)
        assert og.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-3.og")
        assert not g.finalized   # given back as it was found
        with og.Session(g) as plain:
            og.train.Saver().restore(plain, og.train.latest_checkpoint(str(tmp_path)))
            assert plain.run(w.read_value()) == pytest.approx(0.5)   # 4 * (1 - 0.5)^3


def test_saver_build_adds_its_ops_before_the_graph_is_finalized(tmp_path):
    g = og.Graph()
    with g.as_default():
        og.Variable(np.float32(1.0), name="v")
    with g.as_default():
        saver = og.train.Saver(defer_build=True)
    saver.build(g)
    g.finalize()
    with og.Session(g) as sess:
        assert saver.save(sess, str(tmp_path), global_step=1).endswith("ckpt-1.og")

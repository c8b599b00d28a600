"""TF1 code around the rest of tf.train (SessionManager, the checkpoint state file,
AdagradDAOptimizer, GlobalStepWaiterHook, ProfilerHook, basic_train_loop, LooperThread,
match_filenames_once, VocabInfo, ClusterSpec, replica_device_setter) that
tools/record_tf_train_more.py runs under TensorFlow (tf.compat.v1) and
tests/train/test_train_more.py under onegraph.

Each case is a function of the module `tf` (tensorflow.compat.v1 or onegraph) returning
a JSON-able list of observations. Variables start from tensors, which both leave
uninitialized until an initializer runs. Checkpoints are each library's own format
(`_save`): what is compared is the values restored.
"""

from __future__ import annotations

import os
import tempfile
import threading

import numpy as np


def _value(v):
    if isinstance(v, (bytes, np.bytes_)):
        return v.decode()
    if isinstance(v, np.ndarray):
        return [_value(x) for x in v.tolist()] if v.dtype.kind in "SUO" else v.tolist()
    if isinstance(v, (list, tuple)):
        return [_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _value(x) for k, x in v.items()}
    if isinstance(v, np.generic):
        return v.item()
    return v


def _error(fn):
    """["ok", value], or the error's class name and the first line of its message."""
    try:
        return ["ok", _value(fn())]
    except Exception as e:  # noqa: BLE001 - the class name is what is compared
        return [type(e).__name__, str(e).splitlines()[0] if str(e) else ""]


def _is_og(tf):
    return tf.__name__.startswith("onegraph")


def _save(tf, saver, sess, directory, step):
    """Save a checkpoint into `directory` (og's Saver takes the directory, TF's a path
    prefix); the path written."""
    if _is_og(tf):
        return saver.save(sess, directory, global_step=step)
    return saver.save(sess, os.path.join(directory, "model"), global_step=step)


def _vars(tf):
    v = tf.Variable(tf.zeros([2]) + 1.0, name="v")
    w = tf.Variable(tf.zeros([3]) + 2.0, name="w")
    return v, w


# -- checkpoint state file -----------------------------------------------------------------

def _state_file(tf, d, *args, **kwargs):
    """[the state file's text with the directory as <D>] or the error."""
    name = kwargs.get("latest_filename") or "checkpoint"
    try:
        tf.train.update_checkpoint_state(d, *args, **kwargs)
    except Exception as e:  # noqa: BLE001
        return [type(e).__name__, str(e).replace(d, "<D>").splitlines()[0]]
    with open(os.path.join(d, name), encoding="utf-8") as f:
        return ["ok", f.read().replace(d, "<D>")]


def checkpoint_state_file(tf):
    out = []
    with tempfile.TemporaryDirectory() as d:
        p = lambda n: os.path.join(d, n)  # noqa: E731
        out.append(_state_file(tf, d, p("model-3")))
        out.append(_state_file(tf, d, p("model-3"), [p("model-1"), p("model-2")]))
        out.append(_state_file(tf, d, p("model-2"), [p("model-1"), p("model-2")]))
        out.append(_state_file(tf, d, p("b"), [p("a"), p("b")],
                               all_model_checkpoint_timestamps=[1.5, 1000.0],
                               last_preserved_timestamp=0.25))
        out.append(_state_file(tf, d, p("b"), [p("a"), p("b")],
                               all_model_checkpoint_timestamps=[1700000000.123, 1e20]))
        out.append(_state_file(tf, d, p("x"), latest_filename="other_state"))
        out.append(_state_file(tf, d, "relative-7"))
        out.append(_state_file(tf, d, p('q"u\\o\'te\té-ü')))
        out.append(_state_file(tf, d, p("b"), [p("a")],
                               all_model_checkpoint_timestamps=[1.0]))
        out.append(_state_file(tf, d, p("checkpoint")))
        out.append(_state_file(tf, d, p("b"), [p("a")], all_model_checkpoint_timestamps=[],
                               last_preserved_timestamp=3))
        out.append(sorted(os.listdir(d)))
        missing = os.path.join(d, "no", "such")
        try:
            tf.train.update_checkpoint_state(missing, os.path.join(missing, "m"))
            out.append("ok")
        except Exception as e:  # noqa: BLE001
            out.append(type(e).__name__)
    return out


def checkpoint_state_proto(tf):
    out = []
    for args in (("train_dir", "train_dir/model-3", ["train_dir/model-1"]),
                 ("train_dir", "/abs/model-3", ["train_dir/model-1", "/abs/m-2"]),
                 ("/abs/dir", "/abs/dir/model-3", None),
                 ("/abs/dir", "rel/model-3", ["rel/model-1"])):
        state = tf.train.generate_checkpoint_state_proto(*args)
        out.append([state.model_checkpoint_path, list(state.all_model_checkpoint_paths),
                    str(state)])
    state = tf.train.generate_checkpoint_state_proto(
        "/d", "/d/b", ["/d/a", "/d/b"], all_model_checkpoint_timestamps=[2.0, 3.0],
        last_preserved_timestamp=1.0)
    out.append([list(state.all_model_checkpoint_timestamps), state.last_preserved_timestamp,
                str(state)])
    out.append(_error(lambda: str(tf.train.generate_checkpoint_state_proto(
        "/d", "/d/b", ["/d/a"], all_model_checkpoint_timestamps=[1.0, 2.0, 3.0]))))
    return out


# -- SessionManager ----------------------------------------------------------------------

def session_manager_init(tf):
    v, w = _vars(tf)
    p = tf.placeholder(tf.float32, [2])
    assign = tf.assign(v, p)
    ready = tf.report_uninitialized_variables()
    out = []
    sm = tf.train.SessionManager(ready_op=ready)
    sess = sm.prepare_session("", init_op=tf.global_variables_initializer())
    out.append(_value(sess.run([v, w])))
    sess.close()
    # init_fn after init_op, fed init_op
    sess = sm.prepare_session("", init_op=tf.variables_initializer([w]),
                              init_fn=lambda s: s.run(v.initializer))
    out.append(_value(sess.run([v, w])))
    sess.close()
    sess = sm.prepare_session("", init_op=tf.group(assign, w.initializer),
                              init_feed_dict={p: [5.0, 6.0]})
    out.append(_value(sess.run([v, w])))
    sess.close()
    out.append(_error(lambda: sm.prepare_session("")))
    err = _error(lambda: sm.prepare_session("", init_op=tf.variables_initializer([w])))
    out.append([err[0], err[1].startswith("Init operations did not make model ready."),
                "Variables not initialized: v" in err[1]])
    # no ready op: an uninitialized model is accepted
    sess = tf.train.SessionManager().prepare_session(
        "", init_op=tf.variables_initializer([w]))
    out.append(_value(sess.run(w)))
    sess.close()
    return out


def session_manager_local_init(tf):
    v, w = _vars(tf)
    loc = tf.Variable(tf.zeros([]) + 7.0, name="loc", trainable=False,
                      collections=[tf.GraphKeys.LOCAL_VARIABLES])
    err = _error(lambda: tf.train.SessionManager(
        ready_for_local_init_op=tf.report_uninitialized_variables()) and "made")
    out = [[err[0], err[1].startswith("If you pass a ready_for_local_init_op you must "
                                      "also pass a local_init_op")]]
    sm = tf.train.SessionManager(
        local_init_op=loc.initializer,
        ready_op=tf.report_uninitialized_variables(),
        ready_for_local_init_op=tf.report_uninitialized_variables(
            tf.global_variables()))
    sess = sm.prepare_session("", init_op=tf.global_variables_initializer())
    out.append(_value(sess.run([v, w, loc])))
    sess.close()
    err = _error(lambda: sm.prepare_session("", init_op=tf.variables_initializer([w])))
    out.append([err[0], err[1].startswith(
        "Init operations did not make model ready for local_init."),
        "Variables not initialized: v" in err[1]])
    # only a local init op: it is enough to prepare (no init_op needed)
    sm2 = tf.train.SessionManager(local_init_op=tf.global_variables_initializer())
    sess = sm2.prepare_session("")
    out.append(_value(sess.run(v)))
    sess.close()
    return out


def session_manager_restore(tf):
    v, w = _vars(tf)
    step = tf.train.get_or_create_global_step()
    saver = tf.train.Saver([v, w, step])
    init = tf.global_variables_initializer()
    set_v = tf.assign(v, [3.0, 4.0])
    # og's global step starts initialized (made from an array): leave it out of the check
    ready = tf.report_uninitialized_variables([v, w])
    out = []
    with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory() as empty:
        with tf.Session() as sess:
            sess.run(init)
            sess.run(set_v)
            path = _save(tf, saver, sess, d, 5)
        sm = tf.train.SessionManager(ready_op=ready)
        sess = sm.prepare_session("", init_op=init, saver=saver, checkpoint_dir=d)
        out.append(_value(sess.run([v, w, step])))
        sess.close()
        sess = sm.prepare_session("", saver=saver, checkpoint_filename_with_path=path)
        out.append(_value(sess.run([v, w])))
        sess.close()
        # nothing to restore: init_op runs
        sess = sm.prepare_session("", init_op=init, saver=saver, checkpoint_dir=empty)
        out.append(_value(sess.run(v)))
        sess.close()
        # restored without init_op is fine; no saver means no restore
        out.append(_error(lambda: sm.prepare_session("", checkpoint_dir=d)))
        out.append(_error(lambda: sm.prepare_session(
            "", init_op=init, saver=saver, checkpoint_dir=d,
            checkpoint_filename_with_path=path)))
        # recover_session
        sess, ok = sm.recover_session("", saver=saver, checkpoint_dir=d)
        out.append([ok, _value(sess.run(v))])
        sess.close()
        sess, ok = sm.recover_session("", saver=saver, checkpoint_dir=empty)
        out.append([ok, _value(sess.run(ready))])
        sess.close()
        sess, ok = sm.recover_session("")
        out.append(ok)
        sess.close()
        # restored, but a variable outside the saver stays uninitialized: not ready
        extra = tf.Variable(tf.zeros([1]), name="extra")
        sm3 = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
        sess, ok = sm3.recover_session("", saver=saver, checkpoint_dir=d)
        out.append([ok, _value(sess.run(tf.report_uninitialized_variables([extra])))])
        sess.close()
    return out


def session_manager_wait(tf):
    v, w = _vars(tf)
    ready = tf.report_uninitialized_variables()
    out = []
    sm = tf.train.SessionManager(local_init_op=tf.global_variables_initializer(),
                                 ready_op=ready, recovery_wait_secs=1)
    sess = sm.wait_for_session("", max_wait_secs=0)
    out.append(_value(sess.run(v)))
    sess.close()
    sm = tf.train.SessionManager(ready_op=ready, recovery_wait_secs=1)
    err = _error(lambda: sm.wait_for_session("", max_wait_secs=0))
    out.append([err[0], err[1].startswith("Session was not ready after waiting")])
    return out


# -- AdagradDA -----------------------------------------------------------------------------

_DA_CONFIGS = (
    {},
    {"l1_regularization_strength": 0.01},
    {"l2_regularization_strength": 0.02},
    {"l1_regularization_strength": 0.05, "l2_regularization_strength": 0.1,
     "initial_gradient_squared_accumulator_value": 0.5},
)


def _da_run(tf, config, sparse=False, step_in_minimize=True, dtype="float32"):
    dt = getattr(tf, dtype)
    w = tf.Variable(tf.zeros([3], dtype=dt) + tf.constant([1.0, -2.0, 0.5], dtype=dt),
                    name="w")
    step = tf.train.get_or_create_global_step()
    target = tf.constant([0.3, 0.2, -0.4], dtype=dt)
    if sparse:
        loss = tf.reduce_sum(tf.square(tf.gather(w, [0, 2, 0]) - tf.gather(target, [0, 2, 0])))
    else:
        loss = tf.reduce_sum(tf.square(w - target) * tf.constant([1.0, 3.0, 0.5], dtype=dt))
    opt = tf.train.AdagradDAOptimizer(0.1, step, **config)
    train = opt.minimize(loss, global_step=step if step_in_minimize else None)
    slots = [opt.get_slot(w, "gradient_accumulator"),
             opt.get_slot(w, "gradient_squared_accumulator")]
    names = sorted(x.name.split(":")[0] for x in tf.global_variables())
    out = [names, opt.get_slot_names()]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out.append(_value(sess.run(slots)))
        for _ in range(5):
            sess.run(train)
            out.append(_value(sess.run([w] + slots + [step])))
    return out


def adagrad_da_dense(tf):
    return [_da_run(tf, c) for c in _DA_CONFIGS]


def adagrad_da_no_step_increment(tf):
    return [_da_run(tf, c, step_in_minimize=False) for c in _DA_CONFIGS[1:3]]


def adagrad_da_sparse(tf):
    return [_da_run(tf, c, sparse=True) for c in _DA_CONFIGS[::3]]


def adagrad_da_float64(tf):
    return [_da_run(tf, _DA_CONFIGS[3], dtype="float64")]


def adagrad_da_errors(tf):
    step = tf.train.get_or_create_global_step()
    return [_error(lambda: tf.train.AdagradDAOptimizer(
                0.1, step, initial_gradient_squared_accumulator_value=0.0) and "made"),
            _error(lambda: tf.train.AdagradDAOptimizer(
                0.1, step, initial_gradient_squared_accumulator_value=-1.0) and "made")]


# -- hooks and loops ------------------------------------------------------------------------

def _train_graph(tf):
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(tf.zeros([2]) + 1.0, name="w")
    loss = tf.reduce_sum(tf.square(w))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return step, train


def global_step_waiter(tf):
    out = []
    step, train = _train_graph(tf)
    for wait in (0, -3):
        runs = 0
        hooks = [tf.train.GlobalStepWaiterHook(wait), tf.train.StopAtStepHook(last_step=4)]
        with tf.train.MonitoredSession(hooks=hooks) as sess:
            while not sess.should_stop():
                sess.run(train)
                runs += 1
        out.append(runs)
    with tf.Graph().as_default():
        hook = tf.train.GlobalStepWaiterHook(2)
        out.append(_error(lambda: hook.begin()))
    return out


def global_step_waiter_thread(tf):
    """The hook holds the first run until another thread advanced the step."""
    step, train = _train_graph(tf)
    bump = tf.assign_add(step, 1)
    hooks = [tf.train.GlobalStepWaiterHook(3)]
    out = []
    with tf.train.SingularMonitoredSession(hooks=hooks) as sess:
        raw = sess.raw_session()

        def advance():
            for _ in range(3):
                raw.run(bump)
        thread = threading.Timer(0.2, advance)
        thread.start()
        sess.run(train)
        thread.join()
        out.append(_value(raw.run(step)))
    return out


def profiler_hook(tf):
    step, train = _train_graph(tf)
    out = []
    with tempfile.TemporaryDirectory() as d:
        hooks = [tf.train.ProfilerHook(save_steps=2, output_dir=d),
                 tf.train.StopAtStepHook(last_step=7)]
        with tf.train.MonitoredSession(hooks=hooks) as sess:
            while not sess.should_stop():
                sess.run(train)
        names = sorted(n for n in os.listdir(d) if n.startswith("timeline"))
        out.append(names)
        import json
        with open(os.path.join(d, names[0])) as f:
            trace = json.load(f)
        out.append(sorted(trace)[-1] if isinstance(trace, dict) else type(trace).__name__)
        out.append("traceEvents" in trace and len(trace["traceEvents"]) > 0)
        # (an output_dir: TF's hook opens a summary writer there before checking)
        out.append(_error(lambda: tf.train.ProfilerHook(output_dir=d) and "made"))
    with tf.Graph().as_default():
        out.append(_error(lambda: tf.train.ProfilerHook(save_steps=1, output_dir=d).begin()))
    return out


class _FakeSupervisor:
    """What basic_train_loop needs of TF1's Supervisor: stops after `steps` checks."""

    def __init__(self, steps, abort_once=None):
        self.steps, self.checks, self.sessions = steps, 0, 0

    def managed_session(self, master):
        import contextlib
        sup = self

        @contextlib.contextmanager
        def session():
            sup.sessions += 1
            yield f"session-{sup.sessions}"
        return session()

    def should_stop(self):
        self.checks += 1
        return self.checks > self.steps


def basic_train_loop(tf):
    calls = []
    sup = _FakeSupervisor(4)
    tf.train.basic_train_loop(sup, lambda sess, a, b=0: calls.append([sess, a, b]),
                              args=[1], kwargs={"b": 2})
    out = [calls, sup.checks, sup.sessions]
    # an AbortedError restarts the loop with a new managed session
    sup2 = _FakeSupervisor(3)
    state = {"raised": False, "calls": 0}

    def step_fn(sess):
        state["calls"] += 1
        if not state["raised"]:
            state["raised"] = True
            raise tf.errors.AbortedError(None, None, "server restarted")
    tf.train.basic_train_loop(sup2, step_fn)
    out.append([state["calls"], sup2.checks, sup2.sessions])

    def boom(sess):
        raise ValueError("step failed")
    out.append(_error(lambda: tf.train.basic_train_loop(_FakeSupervisor(3), boom)))
    return out


def looper_thread(tf):
    out = []
    coord = tf.train.Coordinator()
    calls = []

    def target(tag):
        calls.append(tag)
        if len(calls) == 5:
            coord.request_stop()
    looper = tf.train.LooperThread.loop(coord, None, target, args=("x",))
    coord.join([looper], stop_grace_period_secs=10)
    out.append([calls, looper.daemon, looper.is_alive()])
    coord = tf.train.Coordinator()
    ticks = []

    def tick():
        ticks.append(1)
        if len(ticks) == 3:
            coord.request_stop()
    looper = tf.train.LooperThread(coord, 0.01, target=tick)
    looper.start()
    coord.join(stop_grace_period_secs=10)
    out.append(len(ticks))
    # an exception in the target stops the coordinator and is re-raised by join
    coord = tf.train.Coordinator()

    def fail():
        raise ValueError("looper failed")
    tf.train.LooperThread.loop(coord, None, fail)
    out.append(_error(lambda: coord.join(stop_grace_period_secs=10)))
    out.append(_error(lambda: tf.train.LooperThread(tf.train.Coordinator(), None,
                                                    args=(1,)) and "made"))
    return out


# -- small pieces -----------------------------------------------------------------------------

def match_filenames_once(tf):
    out = []
    with tempfile.TemporaryDirectory() as d:
        for name in ("b.txt", "a.txt", "c.dat", "a2.txt"):
            open(os.path.join(d, name), "w").close()
        files = tf.train.match_filenames_once(os.path.join(d, "*.txt"))
        none = tf.train.match_filenames_once(os.path.join(d, "*.zip"), name="nothing")
        out.append([files.name.split(":")[0], none.name.split(":")[0]])
        out.append([[x.name.split(":")[0] for x in tf.local_variables()],
                    [x.name for x in tf.global_variables()],
                    [x.name for x in tf.trainable_variables()]])
        with tf.Session() as sess:
            out.append(_value(sess.run(tf.report_uninitialized_variables())))
            sess.run(tf.local_variables_initializer())
            out.append([os.path.basename(_value(p)) for p in sess.run(files)])
            out.append(_value(sess.run(none)))
    return out


def vocab_info(tf):
    info = tf.train.VocabInfo("new.txt", 10, 1, "old.txt")
    full = tf.train.VocabInfo("n", 3, 0, "o", old_vocab_size=2, backup_initializer=None,
                              axis=1)
    return [list(type(info)._fields), list(info), repr(info), list(full),
            type(info).__name__, isinstance(info, tuple),
            _error(lambda: tf.train.VocabInfo("n", 3, 0, "o", axis=2) and "made")]


def cluster_spec(tf):
    spec = tf.train.ClusterSpec({"worker": {0: "w0:1", 3: "w3:1"},
                                 "ps": ["ps0:2", "ps1:2"], "chief": ["c:3"]})
    out = [_value(spec.as_dict()), sorted(spec.jobs), spec.num_tasks("worker"),
           spec.task_indices("worker"), spec.task_address("ps", 1),
           spec.job_tasks("worker"), bool(spec), bool(tf.train.ClusterSpec({})), str(spec),
           tf.train.ClusterSpec(spec).as_dict() == spec.as_dict(),
           spec == tf.train.ClusterSpec(spec.as_dict())]
    out.append(_error(lambda: spec.num_tasks("evaluator")))
    out.append(_error(lambda: spec.task_address("worker", 1)))
    out.append(_error(lambda: spec.task_indices("nope")))
    out.append(_error(lambda: tf.train.ClusterSpec(5) and "made"))
    out.append(_error(lambda: tf.train.ClusterSpec({"ps": "a:1"}) and "made"))
    out.append(_value(tf.train.ClusterSpec({"a": {"1": "x:1"}}).as_dict()))
    return out


def replica_device_setter(tf):
    return [tf.train.replica_device_setter() is None,
            tf.train.replica_device_setter(cluster={"worker": ["w:1"]}) is None,
            tf.train.replica_device_setter(
                cluster={"worker": ["w:1"], "chief": ["c:1"]}, ps_device="/job:ps") is None,
            tf.train.replica_device_setter(ps_tasks=0, worker_device="/job:w") is None]


CASES = ("checkpoint_state_file", "checkpoint_state_proto", "session_manager_init",
         "session_manager_local_init", "session_manager_restore", "session_manager_wait",
         "adagrad_da_dense", "adagrad_da_no_step_increment", "adagrad_da_sparse",
         "adagrad_da_float64", "adagrad_da_errors", "global_step_waiter",
         "global_step_waiter_thread", "profiler_hook", "basic_train_loop", "looper_thread",
         "match_filenames_once", "vocab_info", "cluster_spec", "replica_device_setter")


def run(tf, name):
    """Build case `name` in a fresh graph of `tf` and return its observations."""
    with tf.Graph().as_default():
        return globals()[name](tf)

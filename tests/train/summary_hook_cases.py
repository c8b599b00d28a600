"""Training loops with summary hooks that tools/record_tf_summary_api.py runs under
TensorFlow (tf.compat.v1) and tests/train/test_summary.py under onegraph: the events
written (which steps, which tags, which session logs) must be the same.

`CASES` maps a name to a function `train(tf, logdir)` running a short loop; `events(
records)` turns the (step, kind, detail) triples a reader gives into the comparable form:
kind is "summary" (detail: the sorted tags), "session_log" (detail: the status number),
"graph" or "file_version" (no detail); wall times are left out.
"""

from __future__ import annotations


def _model(tf):
    step = tf.train.get_or_create_global_step()
    w = tf.get_variable("w", initializer=tf.constant(2.0))
    loss = tf.square(w)
    tf.summary.scalar("loss", loss)
    tf.summary.histogram("w", w)
    train = tf.group(tf.assign_sub(w, 0.1 * w), tf.assign_add(step, 1))
    return train


def monitored_steps(tf, logdir):
    """MonitoredTrainingSession with summaries every 2 steps and the step counter every
    3, for 7 steps."""
    train = _model(tf)
    with tf.train.MonitoredTrainingSession(summary_dir=logdir, save_summaries_steps=2,
                                           log_step_count_steps=3,
                                           save_checkpoint_secs=None) as sess:
        for _ in range(7):
            sess.run(train)


def saver_hook(tf, logdir):
    """A SummarySaverHook with its own summary_op (the loss only) every 2 steps.

    (Not 3: the hook fetches the global step in the run that increments it, and TF's
    read then sees the new value, onegraph's the old one, so the hook's guess of the
    next step differs by one; with 2 both fire at the same steps.)"""
    train = _model(tf)
    loss_summary = tf.get_collection("summaries")[0]
    hook = tf.train.SummarySaverHook(save_steps=2, output_dir=logdir,
                                     summary_op=loss_summary)
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        for _ in range(5):
            sess.run(train)


def file_writer(tf, logdir):
    """A FileWriter given summaries by hand, a session log and no graph."""
    train = _model(tf)
    merged = tf.summary.merge_all()
    writer = tf.summary.FileWriter(logdir)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(3):
            summary, _ = sess.run([merged, train])
            writer.add_summary(summary, step * 10)
        writer.add_session_log(tf.SessionLog(status=tf.SessionLog.STOP), 30)
    writer.close()


def checkpoints(tf, logdir):
    """MonitoredTrainingSession saving checkpoints every 2 steps into logdir, summaries
    and the step counter off, for 5 steps: the graph and CHECKPOINT session logs."""
    train = _model(tf)
    with tf.train.MonitoredTrainingSession(checkpoint_dir=logdir, save_checkpoint_steps=2,
                                           save_checkpoint_secs=None,
                                           save_summaries_steps=None,
                                           log_step_count_steps=None) as sess:
        for _ in range(5):
            sess.run(train)


CASES = {"monitored_steps": monitored_steps, "saver_hook": saver_hook,
         "file_writer": file_writer, "checkpoints": checkpoints}


def events(records) -> list:
    """[(step, kind, detail)] as lists (JSON-comparable), in file order."""
    return [[int(step), kind, detail] for step, kind, detail in records]

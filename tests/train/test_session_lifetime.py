"""Session lifetime as in TF1: `with og.Session(g) as sess:` (default session and graph,
closed at the end), `sess.as_default()`, `Tensor.eval` / `Operation.run`, and
`close()` freeing state and cancelling ops blocked on the session's queues."""

import threading
import time

import numpy as np
import pytest

import onegraph as og


def _graph():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        v = og.Variable(np.array([1.0, 2.0], np.float32), name="v")
        y = og.identity(x * v, name="y")
        bump = v.assign_add(np.ones(2, np.float32))
        init = og.global_variables_initializer()
    return g, x, v, y, bump, init


def _run_in_thread(sess, fetch):
    """sess.run(fetch) in a daemon thread: (the started thread, the errors it raised)."""
    errors = []

    def worker():
        try:
            sess.run(fetch)
        except Exception as e:  # recorded for the test to check
            errors.append(e)

    t = threading.Thread(target=worker, daemon=True)
    t.start()
    return t, errors


def test_with_block_sets_defaults_and_closes():
    g, x, v, y, bump, init = _graph()
    assert og.get_default_session() is None
    with og.Session(g) as sess:
        assert og.get_default_session() is sess
        assert og.get_default_graph() is g          # ops built here land in g
        made_inside = og.constant(3.0)
        init.run()
        bump.op.run()
        np.testing.assert_array_equal(y.eval({x: [10.0, 10.0]}), [20.0, 30.0])
        np.testing.assert_array_equal(v.eval(), [2.0, 3.0])
        v.load([5.0, 6.0])
        np.testing.assert_array_equal(sess.run(v), [5.0, 6.0])
    assert made_inside.graph is g
    assert og.get_default_session() is None and og.get_default_graph() is not g
    assert sess.closed
    with pytest.raises(RuntimeError, match="session is closed"):
        sess.run(y, {x: [1.0, 1.0]})
    sess.close()  # closing again does nothing


def test_block_closes_even_when_it_raises():
    g, x, v, y, bump, init = _graph()
    with pytest.raises(KeyError):
        with og.Session(g) as sess:
            raise KeyError("boom")
    assert sess.closed and og.get_default_session() is None


def test_as_default_does_not_close_and_nests():
    g, x, v, y, bump, init = _graph()
    outer, inner = og.Session(g), og.Session(g)
    with outer.as_default():
        init.run()
        with inner.as_default():
            assert og.get_default_session() is inner
            init.run()
            bump.op.run()
        assert og.get_default_session() is outer
        # each session holds its own variable values
        np.testing.assert_array_equal(y.eval({x: [1.0, 1.0]}), [1.0, 2.0])
        np.testing.assert_array_equal(y.eval({x: [1.0, 1.0]}, session=inner), [2.0, 3.0])
    assert not outer.closed and not inner.closed
    np.testing.assert_array_equal(outer.run(y, {x: [1.0, 1.0]}), [1.0, 2.0])


def test_eval_without_a_session_is_a_value_error():
    g, x, v, y, bump, init = _graph()
    with pytest.raises(ValueError, match=r"Tensor.eval of 'y': no default session"):
        y.eval({x: [1.0, 1.0]})
    with pytest.raises(ValueError, match="Operation.run of .*no default session"):
        init.run()


def test_default_session_is_per_thread():
    g, x, v, y, bump, init = _graph()
    seen = []
    with og.Session(g):
        t = threading.Thread(target=lambda: seen.append(og.get_default_session()))
        t.start()
        t.join(10)
    assert seen == [None]


def test_close_frees_variables():
    g, x, v, y, bump, init = _graph()
    sess = og.Session(g)
    sess.run(init)
    assert sess.state
    sess.close()
    assert sess.state == {}


@pytest.mark.parametrize("blocked", ["dequeue", "enqueue"])
def test_close_cancels_ops_waiting_on_its_queues(blocked):
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(1, [og.float32], shapes=[[]])
        enq = q.enqueue([og.constant(1.0)])
        deq = q.dequeue()
    sess = og.Session(g)
    if blocked == "enqueue":
        sess.run(enq)  # full: the next enqueue waits for room
    op = deq if blocked == "dequeue" else enq
    t, errors = _run_in_thread(sess, op)
    time.sleep(0.3)
    assert t.is_alive() and not errors  # really waiting
    sess.close()
    t.join(10)
    assert not t.is_alive(), "close() left the blocked op hanging"
    assert len(errors) == 1 and isinstance(errors[0], og.CancelledError)
    assert isinstance(errors[0], og.ExecutionError)
    assert "its Session was closed" in str(errors[0])


def test_entering_a_closed_session_is_refused():
    g, *_ = _graph()
    sess = og.Session(g)
    sess.close()
    with pytest.raises(RuntimeError, match="closed session"):
        with sess:
            pass


def test_session_of_a_loaded_model_works_in_a_with_block(tmp_path):
    g, x, v, y, bump, init = _graph()
    with og.Session(g) as sess:
        init.run()
        og.save(g, str(tmp_path / "m.og"), session=sess,
                signatures={"serving": og.signature({"x": x}, {"y": y})})
    with og.Session(og.load(str(tmp_path / "m.og"))) as loaded:
        out = loaded.run_signature("serving", x=np.ones(2, np.float32))
    np.testing.assert_array_equal(out["y"], [1.0, 2.0])
    assert loaded.closed


def test_variable_load_and_eval_take_an_explicit_session():
    g, x, v, y, bump, init = _graph()
    sess = og.Session(g)
    sess.run(init)
    v.load(np.array([7.0, 8.0]), sess)      # float64 in: cast as a feed is
    np.testing.assert_array_equal(v.eval(sess), [7.0, 8.0])
    assert v.eval(sess).dtype == np.float32
    with pytest.raises(og.ShapeError):
        v.load([1.0, 2.0, 3.0], sess)
    with pytest.raises(TypeError, match=r"load\(value, session\)"):
        v.load(sess)
    with pytest.raises(ValueError, match="Variable.eval of 'v': no default session"):
        v.eval()
    np.testing.assert_array_equal(v.eval(sess), [7.0, 8.0])  # the failed loads changed nothing


def test_variable_with_a_computed_initial_value_loads_too():
    g = og.Graph()
    with g.as_default():
        w = og.Variable(og.zeros([40, 30]), name="w")   # a ConstantOfShape output
    with og.Session(g) as sess:
        w.initializer.run()
        w.load(np.ones((40, 30), np.float32))
        assert w.eval().sum() == 1200


def test_interactive_session_is_the_default_until_closed():
    g, x, v, y, bump, init = _graph()
    sess = og.InteractiveSession(g)
    try:
        assert og.get_default_session() is sess and og.get_default_graph() is g
        doubled = y * 2.0                       # built in g without a with block
        np.testing.assert_array_equal(doubled.eval({x: [1.0, 1.0]}), [2.0, 4.0])
    finally:
        sess.close()
    assert og.get_default_session() is None and og.get_default_graph() is not g
    assert doubled.graph is g and sess.closed


def test_interactive_session_closed_from_another_thread_leaves_no_default():
    g, *_ = _graph()
    sess = og.InteractiveSession(g)
    t = threading.Thread(target=sess.close)
    t.start()
    t.join(10)
    assert og.get_default_session() is None and og.get_default_graph() is not g


def test_interactive_session_takes_the_default_graph():
    g, x, v, y, bump, init = _graph()
    with g.as_default():
        sess = og.InteractiveSession()
    try:
        assert sess.graph is g and sess.ir_graph is g.ir_graph
        np.testing.assert_array_equal(y.eval({x: [2.0, 2.0]}), [2.0, 4.0])
    finally:
        sess.close()


def test_make_callable_runs_fetches_with_positional_feeds():
    g, x, v, y, bump, init = _graph()
    sess = og.Session(g)
    step = sess.make_callable([y, bump], [x])
    out, bumped = step(np.array([3.0, 4.0], np.float32))
    np.testing.assert_array_equal(out, [3.0, 8.0])
    np.testing.assert_array_equal(bumped, [2.0, 3.0])
    out, _ = step([1.0, 1.0])  # cast as feeds are
    np.testing.assert_array_equal(out, [2.0, 3.0])
    by_name = sess.make_callable({"y": y}, ["x:0"])
    np.testing.assert_array_equal(by_name([1.0, 1.0])["y"], [3.0, 4.0])
    assert sess.make_callable(v)().tolist() == [3.0, 4.0]  # bumped twice


def test_make_callable_checks_its_arguments_when_made():
    g, x, v, y, bump, init = _graph()
    sess = og.Session(g)
    with pytest.raises(og.OneGraphError, match="no tensor named 'nope'"):
        sess.make_callable("nope", [x])
    with pytest.raises(og.OneGraphError, match=r"tensor\(s\) \['x'\] listed twice"):
        sess.make_callable(y, [x, "x"])
    with pytest.raises(TypeError, match="feed_list must be a list of tensors"):
        sess.make_callable(y, x)
    with pytest.raises(TypeError, match="fetches is None"):
        sess.make_callable(None, [x])
    step = sess.make_callable(y, [x])
    with pytest.raises(TypeError, match=r"takes 1 value\(s\), one per feed_list entry, "
                                        r"got 2"):
        step([1.0, 1.0], [2.0, 2.0])
    with pytest.raises(og.ShapeError):
        step([1.0, 2.0, 3.0])


def test_interactive_session_inside_another_graphs_block_stays_the_default():
    """A with-block of g1 ending must take g1 off the stack, not the InteractiveSession's
    graph pushed above it."""
    g1, g2 = og.Graph(), og.Graph()
    with g1.as_default():
        sess = og.InteractiveSession(g2)
    try:
        assert og.get_default_graph() is g2 and og.get_default_session() is sess
    finally:
        sess.close()
    assert og.get_default_graph() is not g1 and og.get_default_graph() is not g2


def test_close_while_the_queue_is_being_made_cancels_the_waiting_step(monkeypatch):
    """close() can walk the session state before a racing step stores the queue it just
    made: that step must still see CancelledError, not wait forever."""
    from onegraph.ops import queue as queue_module

    g = og.Graph()
    with g.as_default():
        deq = og.FIFOQueue(1, [og.float32], shapes=[[]]).dequeue()
    sess = og.Session(g)
    made = threading.Event()
    proceed = threading.Event()
    real_init = queue_module.Queue.__init__

    def slow_init(self, *args, **kwargs):  # hold the step between making and storing
        real_init(self, *args, **kwargs)
        made.set()
        proceed.wait(10)

    monkeypatch.setattr(queue_module.Queue, "__init__", slow_init)
    t, errors = _run_in_thread(sess, deq)
    assert made.wait(10)
    sess.close()          # walks the state now: the queue is not in it yet
    proceed.set()
    t.join(10)
    assert not t.is_alive(), "the step made its queue after close() and waits forever"
    assert len(errors) == 1 and isinstance(errors[0], og.CancelledError)


def test_session_graph_is_the_og_graph_it_runs(tmp_path):
    # TF1 code reaches tensors through the session: sess.graph.get_tensor_by_name after
    # loader.load, `with sess.graph.as_default():`, FileWriter(logdir, sess.graph)
    from onegraph.train.saved_model import saved_model as sm

    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 2], name="x")
        y = og.multiply(x, 3.0, name="y")
    with og.Session(graph=g) as sess:
        assert sess.graph is g and sess.ir_graph is g.ir_graph
        sm.simple_save(sess, str(tmp_path / "m"), inputs={"x": x}, outputs={"y": y})
    with og.Session(graph=og.Graph()) as sess:
        sm.loader.load(sess, [sm.tag_constants.SERVING], str(tmp_path / "m"))
        xx = sess.graph.get_tensor_by_name("x:0")
        yy = sess.graph.get_tensor_by_name("y:0")
        np.testing.assert_array_equal(sess.run(yy, {xx: [[1.0, 2.0]]}), [[3.0, 6.0]])
        with sess.graph.as_default():
            z = og.add(yy, 1.0)
        np.testing.assert_array_equal(sess.run(z, {xx: [[1.0, 2.0]]}), [[4.0, 7.0]])
    # a session of the default graph: sess.graph is that og.Graph
    with g.as_default(), og.Session() as sess:
        assert sess.graph is g
    # a session of a loaded model has no og.Graph: its graph is the model's format graph
    model = g.to_model()
    sess = og.Session(model)
    assert sess.graph is model.graph and sess.ir_graph is model.graph
    with pytest.raises(AttributeError):
        sess.graph = g   # read-only, as TF1's

"""Queues: blocking bounded FIFO, producer thread, closed+drained -> OutOfRangeError,
concurrent training steps on one Session."""

import threading
import time

import numpy as np
import pytest

import onegraph as og


def test_fifo_order_backpressure_and_out_of_range():
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(capacity=2, dtypes=[og.int64], shapes=[[]])
        v = og.placeholder(og.int64, [], name="v")
        enq = q.enqueue(v)
        deq = q.dequeue()
        close = q.close()
        size = q.size()
    sess = og.Session(g)
    sess.run(enq, {v: 1})
    sess.run(enq, {v: 2})
    blocked = threading.Event()
    done = threading.Event()

    def producer():
        blocked.set()
        sess.run(enq, {v: 3})          # full: waits for a dequeue
        done.set()

    t = threading.Thread(target=producer)
    t.start()
    blocked.wait()
    time.sleep(0.2)
    assert not done.is_set(), "enqueue on a full queue must block"
    assert int(sess.run(deq)) == 1
    t.join(5)
    assert done.is_set() and int(sess.run(size)) == 2
    sess.run(close)
    assert [int(sess.run(deq)), int(sess.run(deq))] == [2, 3]
    with pytest.raises(og.OutOfRangeError):
        sess.run(deq)


def test_random_shuffle_queue_returns_every_element_once():
    g = og.Graph()
    with g.as_default():
        q = og.RandomShuffleQueue(capacity=20, min_after_dequeue=0, dtypes=[og.int64],
                                  shapes=[[]], seed=3)
        enq = q.enqueue_many([np.arange(10)])
        deq = q.dequeue_many(10)
    sess = og.Session(g)
    sess.run(enq)
    got = sess.run(deq)
    assert sorted(got.tolist()) == list(range(10)) and got.tolist() != list(range(10))


def _mlp_graph(queue_fed: bool, batch=64):
    g = og.Graph()
    with g.as_default():
        og.set_random_seed(0)
        xs = og.placeholder(og.float32, [None, 64], name="xs")
        ys = og.placeholder(og.int64, [None], name="ys")
        if queue_fed:
            q = og.FIFOQueue(capacity=256, dtypes=[og.float32, og.int64], shapes=[[64], []])
            enq = q.enqueue_many([xs, ys])
            close = q.close()
            x, y = q.dequeue_many(batch)
        else:
            x, y, enq, close = xs, ys, None, None
        h = og.nn.dense(x, 64, activation=og.nn.relu, name="fc1")
        logits = og.nn.dense(h, 10, name="out")
        loss = og.reduce_mean(og.nn.sparse_softmax_cross_entropy(y, logits))
        train = og.train.Adam(3e-3).minimize(loss,
                                             global_step=og.train.get_or_create_global_step())
        acc = og.reduce_mean(og.cast(og.equal(og.argmax(logits, 1), y), og.float32))
    return g, xs, ys, enq, close, train, acc, loss


def _data():
    xtr, ytr = og.datasets.digits("train")
    xte, yte = og.datasets.digits("test")
    return (xtr.reshape(-1, 64).astype(np.float32) / 16, ytr,
            xte.reshape(-1, 64).astype(np.float32) / 16, yte)


def test_queue_fed_training_matches_direct_feeding():
    xtr, ytr, xte, yte = _data()
    epochs, batch = 4, 64
    rng = np.random.default_rng(0)
    orders = [rng.permutation(len(ytr))[: len(ytr) // batch * batch] for _ in range(epochs)]

    g, xs, ys, _, _, train, acc, _ = _mlp_graph(False, batch)
    sess = og.Session(g)
    for order in orders:
        for i in range(0, len(order), batch):
            b = order[i:i + batch]
            sess.run(train, {xs: xtr[b], ys: ytr[b]})
    direct = float(sess.run(acc, {xs: xte, ys: yte}))
    direct_params = {v.name: sess.run(v) for v in og.trainable_variables(g)}

    g, xs, ys, enq, close, train, acc, _ = _mlp_graph(True, batch)
    sess = og.Session(g)

    def producer():
        for order in orders:
            for i in range(0, len(order), 100):
                b = order[i:i + 100]
                sess.run(enq, {xs: xtr[b], ys: ytr[b]})
        sess.run(close)

    t = threading.Thread(target=producer)
    t.start()
    steps = 0
    while True:
        try:
            sess.run(train)
            steps += 1
        except og.OutOfRangeError:
            break
    t.join()
    assert steps == sum(len(o) for o in orders) // batch
    # same batches in the same order -> the same parameters, hence the same accuracy
    for v in og.trainable_variables(g):
        np.testing.assert_allclose(sess.run(v), direct_params[v.name], rtol=1e-6, atol=1e-7)
    assert direct > 0.9


def test_two_threads_train_one_session_without_corruption():
    xtr, ytr, xte, yte = _data()
    g, xs, ys, _, _, train, acc, loss = _mlp_graph(False)
    sess = og.Session(g)
    step = g.get_collection(og.GLOBAL_STEP)[0]
    errors = []

    def worker(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(60):
                b = rng.integers(0, len(ytr), 64)
                sess.run(train, {xs: xtr[b], ys: ytr[b]})
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(s,)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert int(sess.run(step)) == 120
    for v in og.global_variables(g):
        assert np.all(np.isfinite(sess.run(v)))
    assert float(sess.run(acc, {xs: xte, ys: yte})) > 0.85


def test_queue_ops_are_named_once_under_the_callers_scope():
    """The queue op keeps the name asked for (it was suffixed "_1"), and its methods'
    ops take the caller's name scope once (they were "s/s/q/enqueue")."""
    g = og.Graph()
    with g.as_default():
        q = og.FIFOQueue(3, [og.float32], shapes=[[]], name="q")
        with og.name_scope("s"):
            scoped = og.FIFOQueue(3, [og.float32], shapes=[[]], name="q")
            scoped.enqueue([1.0])
        q.dequeue()
    assert [n.name for n in g.ir_graph.nodes] == ["q", "s/q", "s/q/enqueue", "q/dequeue"]
    assert (q.name, scoped.name) == ("q", "s/q")

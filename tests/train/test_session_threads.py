"""Session.run from several threads while another thread adds ops to the graph, as TF1
allows: compiling a plan reads the graph's node and tensor lists, so it must not see
them half-extended. Results are checked against numpy; thread switches are forced
very often (sys.setswitchinterval) so that an unguarded window shows within seconds.
(Concurrent first lookups by name: tests/format/test_name_index_threads.py.)"""

import sys
import threading
import time

import numpy as np
import pytest

import onegraph as og


@pytest.fixture
def frequent_switches():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _threads(fn, n):
    errors = []

    def body(k):
        try:
            fn(k)
        except Exception as e:  # noqa: BLE001 - every failure is reported below
            errors.append(f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=body, args=(k,), daemon=True) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return errors


def test_compiling_while_another_thread_adds_ops(frequent_switches):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 4], name="x")
        y = og.matmul(x, og.constant(np.ones((4, 4), np.float32)))
    sess = og.Session(g)
    xv = np.ones((2, 4), np.float32)
    made = []
    stop = time.monotonic() + 2.0

    def build(_):
        k = 0
        with g.as_default():
            while time.monotonic() < stop:
                made.append((k, og.add(y, og.constant(np.full((4,), k, np.float32)))))
                k += 1

    def run(_):
        while time.monotonic() < stop:
            if made:
                k, t = made[-1]
                got = sess.run(t, {x: xv})  # a new fetch: a new plan is compiled
                np.testing.assert_array_equal(got, xv @ np.ones((4, 4), np.float32) + k)

    errors = _threads(lambda k: (build if k == 0 else run)(k), 4)
    assert len(made) > 10
    assert errors == []

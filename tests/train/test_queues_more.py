"""PaddingFIFOQueue and PriorityQueue against TF's recordings (readers_cases.py,
tools/record_tf_readers.py), and their behaviour across threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import onegraph as og
from onegraph.train.queues import (FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase,
                                   RandomShuffleQueue)

from . import readers_cases as cases
from .test_readers import REFERENCE, _normal, og_api, with_timeout


def test_padding_queue_matches_tf():
    assert _normal(with_timeout(cases.run_padding, og_api())) == _normal(
        REFERENCE["padding"])


def test_priority_queue_matches_tf():
    assert _normal(with_timeout(cases.run_priority, og_api())) == _normal(
        REFERENCE["priority"])


def test_bad_queue_arguments_match_tf():
    got = cases.run_bad_args(og_api())
    want = REFERENCE["bad_args"]
    for name in want:
        assert got[name]["error"] == want[name]["error"], name
    # TF's wording where it is its own (the others name TF's op-building internals)
    assert got["padding_shapes_mismatch"] == want["padding_shapes_mismatch"]
    assert got["priority_shapes_mismatch"] == want["priority_shapes_mismatch"]


def test_every_queue_is_a_queue_base():
    with og.Graph().as_default():
        made = [FIFOQueue(2, [og.int32]), RandomShuffleQueue(2, 0, [og.int32]),
                PaddingFIFOQueue(2, [og.int32], [[None]]), PriorityQueue(2, [og.int32], [[]])]
    assert all(isinstance(q, QueueBase) for q in made)


def test_padding_queue_dequeue_many_zero_uses_zero_for_unknown_dims():
    with og.Graph().as_default():
        q = PaddingFIFOQueue(4, [og.int32], shapes=[[None, 2]])
        with og.Session() as sess:
            got = sess.run(q.dequeue_many(0))
    assert np.asarray(got).shape == (0, 0, 2)


def test_padding_queue_rejects_a_wrong_rank():
    """The declared rank still holds (TF: the element must match shapes' rank)."""
    with og.Graph().as_default():
        q = PaddingFIFOQueue(4, [og.int32], shapes=[[None]])
        x = og.placeholder(og.int32, None)
        enq = q.enqueue([x])
        with og.Session() as sess:
            with pytest.raises(og.ShapeError, match="shape mismatch in component 0"):
                sess.run(enq, {x: np.zeros((2, 2), np.int32)})


def test_priority_queue_dequeue_waits_for_an_enqueue_from_another_thread():
    with og.Graph().as_default():
        q = PriorityQueue(4, [og.string], shapes=[[]])
        p = og.placeholder(og.int64, [])
        s = og.placeholder(og.string, [])
        enq, deq = q.enqueue([p, s]), q.dequeue()
        with og.Session() as sess:
            later = threading.Timer(0.3, lambda: sess.run(enq, {p: 4, s: "late"}))
            later.start()
            prio, value = with_timeout(sess.run, deq)
            later.join()
    assert int(prio) == 4 and np.asarray(value).item() == "late"


def test_priority_queue_orders_across_producer_threads():
    """Everything enqueued by several threads comes out sorted by priority."""
    with og.Graph().as_default():
        q = PriorityQueue(64, [og.int32], shapes=[[]])
        p = og.placeholder(og.int64, [None])
        v = og.placeholder(og.int32, [None])
        enq, size = q.enqueue_many([p, v]), q.size()
        many = q.dequeue_many(30)
        with og.Session() as sess:
            def produce(k):
                prios = (np.arange(10) * 7 + k) % 30
                sess.run(enq, {p: prios, v: prios.astype(np.int32)})
            workers = [threading.Thread(target=produce, args=(k,)) for k in range(3)]
            for w in workers:
                w.start()
            for w in workers:
                w.join(60)
            assert int(sess.run(size)) == 30
            prios, values = with_timeout(sess.run, many)
    assert list(prios) == sorted(prios) and list(values) == list(prios)


def test_shared_name_of_another_kind_is_refused():
    with og.Graph().as_default():
        a = FIFOQueue(2, [og.int64], shapes=[[]], shared_name="shared")
        b = PriorityQueue(2, [], shapes=[], shared_name="shared")
        with og.Session() as sess:
            sess.run(a.size())
            with pytest.raises(og.ExecutionError, match="has kind FIFOQueue but this queue "
                               "op requested PriorityQueue"):
                sess.run(b.size())

"""Optimizers on sparse gradients (Gather / embedding_lookup): TF1's SparseApply* rules.

Repeated indices are summed first, then only the looked-up rows of the variable and
its slots change; Adam decays every row's moments, as TF1's AdamOptimizer does. The
reference is a plain numpy loop over the rows.
"""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError

LR = 0.1
STEPS = [[0, 2, 2], [1], [3, 0, 3, 3]]


def _reference(kind, emb, weights):
    """Variable after each step of STEPS, with only looked-up rows updated (TF1)."""
    w = emb.astype(np.float64)
    slot1 = np.full_like(w, 0.1 if kind == "adagrad" else 0.0)
    slot2 = np.zeros_like(w)
    for ids in STEPS:
        grad = {}
        for i, r in enumerate(ids):  # d loss / d row r = weights[i], summed over repeats
            grad[r] = grad.get(r, 0) + weights[i]
        for r, g in grad.items():
            if kind == "momentum":
                slot1[r] = 0.9 * slot1[r] + g
                w[r] -= LR * slot1[r]
            elif kind == "nesterov":
                slot1[r] = 0.9 * slot1[r] + g
                w[r] -= LR * (g + 0.9 * slot1[r])
            elif kind == "adagrad":
                slot1[r] += g * g
                w[r] -= LR * g / (np.sqrt(slot1[r]) + 1e-7)
            elif kind == "rmsprop":
                slot1[r] = 0.9 * slot1[r] + 0.1 * g * g
                slot2[r] = 0.5 * slot2[r] + LR * g / np.sqrt(slot1[r] + 1e-7)
                w[r] -= slot2[r]
            elif kind == "sgd":
                w[r] -= LR * g
    return w


@pytest.mark.parametrize("kind,make", [
    ("sgd", lambda: og.train.SGD(LR)),
    ("momentum", lambda: og.train.Momentum(LR, 0.9)),
    ("nesterov", lambda: og.train.Momentum(LR, 0.9, use_nesterov=True)),
    ("adagrad", lambda: og.train.AdaGrad(LR)),
    ("rmsprop", lambda: og.train.RMSProp(LR, rho=0.9, momentum=0.5)),
])
def test_sparse_gradients_update_only_the_looked_up_rows(kind, make):
    rng = np.random.default_rng(3)
    emb0 = rng.standard_normal((5, 2)).astype(np.float32)
    weights = rng.standard_normal((4, 2)).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        emb = og.Variable(emb0, name="emb")
        ids = og.placeholder(og.int64, [None], name="ids")
        wt = og.placeholder(og.float32, [None, 2], name="wt")
        loss = og.reduce_sum(og.nn.embedding_lookup(emb, ids) * wt)
        train = make().minimize(loss)
    ops = {n.op_type for n in g.ir_graph.nodes}
    assert "IndexedSlicesToDense" not in ops  # the gradient stays sparse
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    for ids_v in STEPS:
        sess.run(train, {ids: np.array(ids_v), wt: weights[:len(ids_v)]})
    got = sess.run(emb)
    np.testing.assert_allclose(got, _reference(kind, emb0, weights), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got[4], emb0[4])  # never looked up


def test_rmsprop_slots_of_rows_not_looked_up_stay():
    g = og.Graph()
    with g.as_default():
        emb = og.Variable(np.zeros((3, 2), np.float32), name="emb")
        ids = og.placeholder(og.int64, [None], name="ids")
        opt = og.train.RMSProp(0.1, rho=0.9)
        train = opt.minimize(og.reduce_sum(og.nn.embedding_lookup(emb, ids)))
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    sess.run(train, {ids: np.array([0])})
    sess.run(train, {ids: np.array([1])})
    np.testing.assert_allclose(sess.run(opt.get_slot(emb, "rms")),
                               [[0.1, 0.1], [0.1, 0.1], [0.0, 0.0]], rtol=1e-6)


@pytest.mark.parametrize("op,slots", [("SparseApplyMomentum", 1), ("SparseApplyAdagrad", 1),
                                      ("SparseApplyRMSProp", 2),
                                      ("SparseApplyGradientDescent", 0)])
def test_sparse_update_with_an_index_outside_the_rows_is_refused(op, slots):
    g = og.Graph()
    with g.as_default():
        var = og.Variable(np.zeros((3, 2), np.float32), name="v")
        extra = [og.Variable(np.zeros((3, 2), np.float32), name=f"s{i}").handle
                 for i in range(slots)]
        lr = og.constant(np.float32(0.1))
        values = og.constant(np.ones((1, 2), np.float32))
        indices = og.constant(np.array([3], np.int64))
        inputs = [var.handle] + extra + [lr, values, indices]
        if op == "SparseApplyMomentum":
            inputs.append(og.constant(np.float32(0.9)))
        update = g.op(op, inputs)
    sess = og.Session(g)
    sess.run(og.global_variables_initializer(g))
    with pytest.raises(ExecutionError, match=r"index 3 is outside the variable's 3 rows"):
        sess.run(update)
    np.testing.assert_array_equal(sess.run(var), np.zeros((3, 2)))

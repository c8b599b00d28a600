"""The Session's plan cache: one plan per set of feeds, fetches and targets whatever
their order, at most MAX_PLANS of them (the least recently used dropped), and constants
folded once per Session, shared by every plan, instead of a copy per plan."""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import onegraph as og
from onegraph.convert import from_onnx
from onegraph.train import session as session_mod


def _dequantized_layers(n, size=8):
    """x -> n layers of MatMul by an int8 weight through DequantizeLinear (folded)."""
    rng = np.random.default_rng(0)
    nodes, inits, cur = [], [], "x"
    for k in range(n):
        inits += [numpy_helper.from_array(
                      rng.integers(-127, 128, (size, size)).astype(np.int8), f"q{k}"),
                  numpy_helper.from_array(np.array(0.01, np.float32), f"s{k}")]
        nodes += [helper.make_node("DequantizeLinear", [f"q{k}", f"s{k}"], [f"w{k}"]),
                  helper.make_node("MatMul", [cur, f"w{k}"], [f"h{k}"])]
        cur = f"h{k}"
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, size])],
        [helper.make_tensor_value_info(cur, TensorProto.FLOAT, [1, size])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m, inits


def _plan_constants(plan):
    return {id(v) for v in plan.template if isinstance(v, np.ndarray)}


def test_fetch_order_and_repeats_share_one_plan():
    m, _ = _dequantized_layers(3)
    sess = og.Session(from_onnx(m))
    x = np.ones((1, 8), np.float32)
    a, b = sess.run(["h0", "h2"], {"x": x})
    b2, a2, b3 = sess.run(["h2", "h0", "h2"], {"x": x})
    assert len(sess._plans) == 1
    np.testing.assert_array_equal(a, a2)
    np.testing.assert_array_equal(b, b2)
    assert b3 is b2


def test_plans_fold_each_constant_once_and_share_it():
    m, inits = _dequantized_layers(4)
    sess = og.Session(from_onnx(m))
    x = np.ones((1, 8), np.float32)
    results = [sess.run(f"h{k}", {"x": x}) for k in range(4)]
    plans = list(sess._plans.values())
    assert len(plans) == 4
    w0 = [p.template[sess.graph.find_tensor("w0")] for p in plans]
    assert all(w is w0[0] for w in w0)  # one folded array, not one per plan
    # the values are still right: against numpy on the dequantized weights
    h = x
    for k, init in enumerate(inits[::2]):
        h = h @ (numpy_helper.to_array(init).astype(np.float32) * np.float32(0.01))
        np.testing.assert_allclose(results[k], h, rtol=1e-5)


def test_the_cache_holds_at_most_max_plans(monkeypatch):
    monkeypatch.setattr(session_mod, "MAX_PLANS", 3)
    m, _ = _dequantized_layers(5)
    sess = og.Session(from_onnx(m))
    x = np.ones((1, 8), np.float32)
    first = sess.run("h4", {"x": x})
    for k in range(5):
        sess.run(f"h{k}", {"x": x})
        assert len(sess._plans) <= 3
    np.testing.assert_array_equal(sess.run("h4", {"x": x}), first)


def test_a_plan_run_every_step_survives_new_fetch_sets(monkeypatch):
    # a training loop's step runs between evaluations that each fetch something new:
    # with the oldest dropped first, the step was compiled again after every 3 new sets
    monkeypatch.setattr(session_mod, "MAX_PLANS", 3)
    m, _ = _dequantized_layers(5)
    sess = og.Session(from_onnx(m))
    x = np.ones((1, 8), np.float32)
    compiled = []
    real = sess._compile

    def counting(graph, fetches, *rest, **kw):
        compiled.append(tuple(fetches))
        return real(graph, fetches, *rest, **kw)
    monkeypatch.setattr(sess, "_compile", counting)
    step = sess.run("h4", {"x": x})
    for k in range(4):
        np.testing.assert_array_equal(sess.run("h4", {"x": x}), step)
        sess.run(f"h{k}", {"x": x})
    steps = [f for f in compiled if f == compiled[0]]
    assert len(steps) == 1, compiled  # compiled once, at the first run
    assert len(sess._plans) <= 3

"""og.nn.dynamic_rnn with LSTMCell, GRUCell and BasicRNNCell against numpy loops over
the cells' own weights, with sequence lengths, time-major inputs and initial states;
gradients by central differences; the export run by onnxruntime."""

import numpy as np
import onnxruntime as ort
import pytest

import onegraph as og
from onegraph.convert import to_onnx

from .gradcheck import check_op_gradients


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def _numpy_rnn(kind, weights, x, lengths, state):
    """(outputs (batch, time, units), final state) of TF1's cells, step by step."""
    outs = np.zeros(x.shape[:2] + (state[0].shape[-1],))
    state = [s.copy() for s in state]
    for t in range(x.shape[1]):
        xt, h = x[:, t], state[-1]
        if kind == "lstm":
            k, b = weights
            i, g, f, o = np.split(np.concatenate([xt, h], 1) @ k + b, 4, axis=1)
            c = _sigmoid(f + 1.0) * state[0] + _sigmoid(i) * np.tanh(g)
            new = [c, _sigmoid(o) * np.tanh(c)]
        elif kind == "gru":
            gk, gb, ck, cb = weights
            r, u = np.split(_sigmoid(np.concatenate([xt, h], 1) @ gk + gb), 2, axis=1)
            cand = np.tanh(np.concatenate([xt, r * h], 1) @ ck + cb)
            new = [u * h + (1 - u) * cand]
        else:
            k, b = weights
            new = [np.tanh(np.concatenate([xt, h], 1) @ k + b)]
        running = (t < lengths)[:, None]
        state = [np.where(running, n, s) for n, s in zip(new, state)]
        outs[:, t] = np.where(running, new[-1], 0.0)
    return outs, state


CELLS = {"lstm": lambda: og.nn.LSTMCell(3), "gru": lambda: og.nn.GRUCell(3),
         "basic": lambda: og.nn.BasicRNNCell(3)}


@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize("kind", sorted(CELLS))
def test_dynamic_rnn_matches_a_numpy_loop(kind, time_major):
    rng = np.random.RandomState(0)
    x = rng.randn(3, 5, 2)
    lengths = np.array([5, 2, 0])
    g = og.Graph()
    with g.as_default():
        xs = og.placeholder(og.float64, [None, None, 2], name="x")
        n = og.placeholder(og.int32, [None], name="n")
        cell = CELLS[kind]()
        fed = og.transpose(xs, [1, 0, 2]) if time_major else xs
        outs, state = og.nn.dynamic_rnn(cell, fed, sequence_length=n, dtype=og.float64,
                                        time_major=time_major)
        if time_major:
            outs = og.transpose(outs, [1, 0, 2])
        weights = og.global_variables()
    assert [w.name for w in weights][0].startswith("rnn/")
    sess = og.Session(g)
    got_outs, got_state, values = sess.run([outs, list(state) if kind == "lstm" else state,
                                           weights], {xs: x, n: lengths})
    zeros = [np.zeros((3, 3))] * (2 if kind == "lstm" else 1)
    want_outs, want_state = _numpy_rnn(kind, values, x, lengths, zeros)
    np.testing.assert_allclose(got_outs, want_outs, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.array(got_state).reshape(-1),
                               np.array(want_state).reshape(-1), rtol=1e-12, atol=1e-14)


def test_initial_state_zero_steps_and_gradients():
    rng = np.random.RandomState(1)
    h0 = rng.randn(2, 3)
    g = og.Graph()
    with g.as_default():
        xs = og.placeholder(og.float64, [2, None, 2])
        outs, state = og.nn.dynamic_rnn(og.nn.GRUCell(3), xs, initial_state=og.constant(h0))
    got_outs, got_state = og.Session(g).run([outs, state], {xs: np.zeros((2, 0, 2))})
    assert got_outs.shape[0] == 0 or got_outs.size == 0
    np.testing.assert_array_equal(got_state, h0)   # no steps: the initial state

    def build(x):
        out, last = og.nn.dynamic_rnn(og.nn.LSTMCell(3), x, dtype=og.float64,
                                      sequence_length=[3, 1])
        return [out, last[0]]
    check_op_gradients(build, [rng.randn(2, 3, 2)])


def test_dynamic_rnn_exports_as_a_loop_for_onnxruntime():
    rng = np.random.RandomState(2)
    xv = rng.randn(2, 4, 3).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, None, 3], name="x")
        n = og.placeholder(og.int32, [None], name="n")
        outs, (c, h) = og.nn.dynamic_rnn(og.nn.LSTMCell(5), x, sequence_length=n,
                                         dtype=og.float32)
        sig = og.signature({"x": x, "n": n}, {"outs": outs, "h": h})
    sess = og.Session(g)
    feeds = {x: xv, n: np.array([4, 2], np.int32)}
    want = sess.run([outs, h], feeds)
    proto = to_onnx(g, signatures={"serving": sig}, session=sess, opset=17)
    got = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]
                               ).run(["outs", "h"], {"x": xv, "n": np.array([4, 2], np.int32)})
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_bad_arguments_are_refused_while_building():
    g = og.Graph()
    with g.as_default():
        with pytest.raises(TypeError, match="cell must be an og.nn"):
            og.nn.dynamic_rnn(object(), og.placeholder(og.float32, [1, 2, 3]))
        with pytest.raises(og.ShapeError, match="3-D with a known feature dim"):
            og.nn.dynamic_rnn(og.nn.GRUCell(2), og.placeholder(og.float32, [1, 2]))
        with pytest.raises(TypeError, match="num_units must be a positive int"):
            og.nn.GRUCell(0)

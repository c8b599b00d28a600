"""og.nn's recurrent networks against TensorFlow: dynamic_rnn,
bidirectional_dynamic_rnn, static_rnn and static_bidirectional_rnn over LSTMCell,
BasicLSTMCell, GRUCell, BasicRNNCell and MultiRNNCell, with TensorFlow's variable names
and values, outputs, final states and input gradients recorded in
data/tf1_rnn_reference.npz by `tools/record_tf1_reference.py rnn`; DropoutWrapper's
behaviour; exports."""

import numpy as np
import onnxruntime as ort
import pytest

import onegraph as og
from onegraph.convert import to_onnx
from onegraph.errors import ShapeError

from . import tf1_reference
from .tf1_rnn_cases import CASES, make_inputs


@pytest.fixture(scope="module")
def reference():
    return tf1_reference.load("rnn")


def test_reference_inputs_are_the_cases_inputs(reference):
    for key, value in make_inputs().items():
        np.testing.assert_array_equal(reference[f"in/{key}"], value)


def _cell(spec, forget_bias=None):
    kind, arg = spec[:2]
    options = spec[2] if len(spec) > 2 else {}
    cells = og.nn.rnn_cell
    if kind == "multi":
        return cells.MultiRNNCell([_cell(c) for c in arg])
    if forget_bias is not None:
        return cells.BasicLSTMCell(arg, forget_bias=forget_bias)
    return {"lstm": cells.LSTMCell, "basic_lstm": cells.BasicLSTMCell,
            "gru": cells.GRUCell, "rnn": cells.BasicRNNCell}[kind](arg, **options)


def _leaves(state):
    if isinstance(state, (tuple, list)):
        return [leaf for part in state for leaf in _leaves(part)]
    return [state]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow(reference, case):
    name, kind, specs, kwargs = case
    kwargs = dict(kwargs)
    forget_bias = kwargs.pop("forget_bias", None)
    xv = reference["in/x_time_major" if kwargs.get("time_major") else "in/x"]
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, list(xv.shape))
        if "sequence_length" in kwargs:
            kwargs["sequence_length"] = og.constant(reference[f"in/{kwargs['sequence_length']}"])
        cells = [_cell(s, forget_bias) for s in specs]
        if kind in ("static", "static_bi"):
            steps = og.unstack(x, axis=1)
            if kind == "static":
                out_steps, state = og.nn.static_rnn(cells[0], steps, dtype=og.float32,
                                                    **kwargs)
            else:
                out_steps, state_fw, state_bw = og.nn.static_bidirectional_rnn(
                    cells[0], cells[1], steps, dtype=og.float32, **kwargs)
                state = (state_fw, state_bw)
            assert len(out_steps) == xv.shape[1]
            outs = [og.stack(out_steps, axis=1)]
        elif kind == "uni":
            out, state = og.nn.dynamic_rnn(cells[0], x, dtype=og.float32, **kwargs)
            outs = [out]
        else:
            outs, state = og.nn.bidirectional_dynamic_rnn(cells[0], cells[1], x,
                                                          dtype=og.float32, **kwargs)
            outs = list(outs)
        loss = og.add_n([og.reduce_sum(o * og.constant(reference[f"r/{name}/{k}"]))
                         for k, o in enumerate(outs)])
        (grad,) = og.gradients(loss, [x])
        variables = {v.name: v for v in og.trainable_variables()}
        stored = {k.split("/", 2)[2]: v for k, v in reference.items()
                  if k.startswith(f"var/{name}/")}
        assert sorted(variables) == sorted(stored)   # TF1's variable names
        sess = og.Session(g)
        sess.run(og.global_variables_initializer())
        for key, var in variables.items():
            var.load(stored[key], sess)
        got = sess.run([outs, _leaves(state), grad], {x: xv})
    for k, o in enumerate(got[0]):
        np.testing.assert_allclose(o, reference[f"out/{name}/{k}"], rtol=1e-5, atol=2e-6,
                                   err_msg=f"output {k}")
    assert len(got[1]) == len([k for k in reference if k.startswith(f"state/{name}/")])
    for k, leaf in enumerate(got[1]):
        np.testing.assert_allclose(leaf, reference[f"state/{name}/{k}"], rtol=1e-5,
                                   atol=2e-6, err_msg=f"state {k}")
    np.testing.assert_allclose(got[2], reference[f"grad/{name}"], rtol=1e-5, atol=1e-5)


def test_dropout_wrapper_drops_outputs_and_lstm_h_only():
    xv = np.random.RandomState(0).randn(64, 5, 3).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 5, 3])
        keep = og.placeholder_with_default(1.0, [])
        cell = og.nn.rnn_cell.DropoutWrapper(og.nn.rnn_cell.LSTMCell(8),
                                             output_keep_prob=keep, state_keep_prob=0.5)
        out, (c, h) = og.nn.dynamic_rnn(cell, x, dtype=og.float32)
        sess = og.Session(g, seed=3)
        sess.run(og.global_variables_initializer())
        kept, dropped = sess.run(out, {x: xv}), sess.run(out, {x: xv, keep: 0.5})
        hv = sess.run(h, {x: xv})
        cv = sess.run(c, {x: xv})
    assert np.count_nonzero(kept == 0) == 0
    zeros = np.count_nonzero(dropped == 0) / dropped.size
    assert 0.4 < zeros < 0.6
    assert 0.4 < np.count_nonzero(hv == 0) / hv.size < 0.6    # h dropped with p 0.5
    assert np.count_nonzero(cv == 0) == 0                      # c never is
    with pytest.raises(ValueError, match=r"output_keep_prob must be in \(0, 1\]"):
        og.nn.rnn_cell.DropoutWrapper(og.nn.GRUCell(2), output_keep_prob=0.0)
    with pytest.raises(TypeError, match="MultiRNNCell: cells\\[1\\]"):
        og.nn.rnn_cell.MultiRNNCell([og.nn.GRUCell(2), "cell"])
    with pytest.raises(TypeError, match="cell must be an og.nn RNN cell"):
        og.nn.bidirectional_dynamic_rnn(og.nn.GRUCell(2), None, og.zeros([1, 2, 3]))


def test_stacked_and_bidirectional_networks_export_for_onnxruntime():
    xv = np.random.RandomState(1).randn(2, 4, 3).astype(np.float32)
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, None, 3], name="x")
        n = og.placeholder(og.int32, [None], name="n")
        stacked, _ = og.nn.dynamic_rnn(og.nn.rnn_cell.MultiRNNCell(
            [og.nn.rnn_cell.LSTMCell(4), og.nn.GRUCell(3)]), x, sequence_length=n,
            dtype=og.float32)
        (fw, bw), _ = og.nn.bidirectional_dynamic_rnn(og.nn.GRUCell(2), og.nn.GRUCell(2), x,
                                                      sequence_length=n, dtype=og.float32,
                                                      scope="birnn")
        outs = {"stacked": stacked, "both": og.concat([fw, bw], 2)}
        sig = og.signature({"x": x, "n": n}, outs)
        sess = og.Session(g)
        sess.run(og.global_variables_initializer())
        feed = {x: xv, n: np.array([4, 2], np.int32)}
        want = sess.run(list(outs.values()), feed)
        proto = to_onnx(g, signatures={"serving": sig}, session=sess)
    got = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]
                               ).run(list(outs), {"x": xv, "n": feed[n]})
    for key, a, b in zip(outs, got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=key)


def test_static_rnn_refuses_what_is_not_a_list_of_steps():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2, 5, 3])
        cell = og.nn.rnn_cell.GRUCell(2)
        with pytest.raises(TypeError, match="static_rnn: inputs must be a list .* use "
                                            "og.nn.dynamic_rnn"):
            og.nn.static_rnn(cell, x, dtype=og.float32)
        with pytest.raises(ShapeError, match="at least one step"):
            og.nn.static_rnn(cell, [], dtype=og.float32)
        with pytest.raises(ShapeError, match="step 1 has 4 features but step 0 has 3"):
            og.nn.static_rnn(cell, [x[:, 0], og.placeholder(og.float32, [2, 4])])
        with pytest.raises(ShapeError, match="step 0 must be 2-D"):
            og.nn.static_bidirectional_rnn(cell, cell, [x], dtype=og.float32)
        with pytest.raises(TypeError, match="cell_bw: cell must be"):
            og.nn.static_bidirectional_rnn(cell, "gru", [x[:, 0]])

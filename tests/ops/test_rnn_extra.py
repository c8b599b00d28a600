"""Extra checks of the RNN / GRU / LSTM kernels.

1. The ONNX node cases for these ops, with outputs matched by *name*: most of them
   omit Y (node outputs ``['', 'Y_h']``), and the expected data only holds the outputs
   that are present, so they must be paired with the kernel's outputs by position in
   ``node.output`` (the generic harness pairs them positionally).
2. Attribute combinations the ONNX cases do not cover, compared with onnxruntime.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from onegraph.errors import ShapeError
from onegraph.ops import TensorInfo, get_op

from .node_cases import assert_outputs_match, onnx_attr_value, run_node_kernel, \
    single_node_cases

_CASES = list(single_node_cases({"RNN", "GRU", "LSTM"}))


def _present(node, values):
    """Keep the entries of `values` (one per op output) whose node output is named."""
    return [v for name, v in zip(node.output, values) if name != ""]


@pytest.mark.parametrize("case", _CASES, ids=[c[0] for c in _CASES])
def test_rnn_node_case_by_name(case):
    name, node, inputs, expected, rtol, atol = case
    actual = run_node_kernel(node, inputs)
    assert isinstance(actual, tuple)
    assert_outputs_match(expected, _present(node, actual), rtol, atol, name)


@pytest.mark.parametrize("case", _CASES, ids=[c[0] for c in _CASES])
def test_rnn_node_inference_by_name(case):
    name, node, inputs, expected, rtol, atol = case
    op = get_op(node.op_type)
    attrs = op.resolve_attrs({a.name: onnx_attr_value(a) for a in node.attribute})
    it = iter(inputs)
    infos = [None if n == "" else TensorInfo(np.asarray(v).dtype, np.asarray(v).shape)
             for n in node.input for v in ([None] if n == "" else [next(it)])]
    result = _present(node, op.infer(attrs, infos))
    assert len(result) == len(expected)
    for info, want in zip(result, expected, strict=True):
        assert np.dtype(info.dtype) == want.dtype
        assert info.shape == want.shape, f"{name}: inferred {info.shape}, want {want.shape}"


# ---------------------------------------------------------------------------------------
# onnxruntime comparisons

_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _run_both(op_type, feeds, attrs, outputs):
    """Run a one-node model on onnxruntime and on our kernel; return both output lists.

    onnxruntime's CPU kernels refuse layout=1, so for layout=1 onnxruntime runs the
    equivalent layout=0 model on transposed inputs and its outputs are transposed back;
    our kernel runs layout=1 directly.
    """
    if attrs.get("layout", 0) == 1:
        swap = {k: (np.ascontiguousarray(v.transpose(1, 0, 2))
                    if k in ("X", "initial_h", "initial_c") else v)
                for k, v in feeds.items()}
        want, _, _, _ = _run_both(op_type, swap, dict(attrs, layout=0), outputs)
        present = [o for o in outputs if o]
        want = [w.transpose(2, 0, 1, 3) if o == "Y" else w.transpose(1, 0, 2)
                for o, w in zip(present, want)]
        op = get_op(op_type)
        in_names = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]
        got = op.kernel([feeds.get(n) for n in in_names], op.resolve_attrs(attrs), None)
        got = [g for name, g in zip(["Y", "Y_h", "Y_c"], got) if name in present]
        return want, got, op, None
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    in_names = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]
    node_inputs = []
    graph_inputs = []
    ort_feeds = {}
    for nm in in_names[:max(i for i, n in enumerate(in_names) if n in feeds) + 1]:
        if nm not in feeds:
            node_inputs.append("")
            continue
        node_inputs.append(nm)
        v = feeds[nm]
        elem = helper.np_dtype_to_tensor_dtype(v.dtype)
        graph_inputs.append(helper.make_tensor_value_info(nm, elem, v.shape))
        ort_feeds[nm] = v
    node = helper.make_node(op_type, node_inputs, outputs, **attrs)
    graph_outputs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                     for o in outputs if o]
    graph = helper.make_graph([node], "g", graph_inputs, graph_outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"])
    want = sess.run(None, ort_feeds)
    args = [feeds.get(nm) for nm in in_names[:len(node_inputs)]]
    op = get_op(op_type)
    got = op.kernel(args, op.resolve_attrs(attrs), None)
    return want, _present(node, got), op, node


def _weights(rng, op_type, nd, hs, in_size, peepholes=False):
    g = _GATES[op_type]
    feeds = {
        "W": rng.standard_normal((nd, g * hs, in_size)).astype(np.float32) * 0.5,
        "R": rng.standard_normal((nd, g * hs, hs)).astype(np.float32) * 0.5,
        "B": rng.standard_normal((nd, 2 * g * hs)).astype(np.float32) * 0.5,
    }
    if peepholes:
        feeds["P"] = rng.standard_normal((nd, 3 * hs)).astype(np.float32) * 0.5
    return feeds


@pytest.mark.parametrize("layout", [0, 1])
def test_lstm_bidirectional_seq_lens_vs_onnxruntime(layout):
    rng = np.random.default_rng(0)
    t_len, batch, in_size, hs, nd = 5, 4, 3, 6, 2
    feeds = _weights(rng, "LSTM", nd, hs, in_size, peepholes=True)
    x = rng.standard_normal((t_len, batch, in_size)).astype(np.float32)
    h0 = rng.standard_normal((nd, batch, hs)).astype(np.float32)
    c0 = rng.standard_normal((nd, batch, hs)).astype(np.float32)
    if layout == 1:
        x, h0, c0 = x.transpose(1, 0, 2), h0.transpose(1, 0, 2), c0.transpose(1, 0, 2)
    feeds.update(X=np.ascontiguousarray(x), initial_h=np.ascontiguousarray(h0),
                 initial_c=np.ascontiguousarray(c0),
                 sequence_lens=np.array([5, 2, 4, 1], dtype=np.int32))
    attrs = dict(hidden_size=hs, direction="bidirectional", layout=layout)
    want, got, op, _ = _run_both("LSTM", feeds, attrs, ["Y", "Y_h", "Y_c"])
    for w, g in zip(want, got, strict=True):
        assert g.dtype == np.float32
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    infos = [TensorInfo(v.dtype, v.shape) if v is not None else None
             for v in (feeds.get(n) for n in
                       ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"])]
    assert [i.shape for i in op.infer(op.resolve_attrs(attrs), infos)] == \
        [w.shape for w in want]


@pytest.mark.parametrize("op_type,attrs", [
    ("LSTM", dict(direction="reverse", activations=["HardSigmoid", "Softsign", "Elu"],
                  activation_alpha=[0.3, 0.7], activation_beta=[0.4], clip=2.5)),
    ("LSTM", dict(direction="forward", input_forget=1, layout=1)),
    ("GRU", dict(direction="bidirectional", linear_before_reset=1, layout=1)),
    ("GRU", dict(direction="reverse", activations=["Sigmoid", "LeakyRelu"],
                 activation_alpha=[0.2], clip=1.5)),
    ("RNN", dict(direction="bidirectional", activations=["Relu", "ScaledTanh"],
                 activation_alpha=[0.9], activation_beta=[1.3])),
    ("RNN", dict(direction="forward", activations=["Affine"], activation_alpha=[0.5],
                 activation_beta=[0.1], layout=1)),
    ("RNN", dict(direction="reverse", activations=["Softplus"])),
    ("RNN", dict(direction="forward", activations=["ThresholdedRelu"],
                 activation_alpha=[0.2])),
])
def test_attribute_combinations_vs_onnxruntime(op_type, attrs):
    rng = np.random.default_rng(1)
    t_len, batch, in_size, hs = 4, 3, 5, 4
    nd = 2 if attrs["direction"] == "bidirectional" else 1
    layout = attrs.get("layout", 0)
    feeds = _weights(rng, op_type, nd, hs, in_size)
    x_shape = (batch, t_len, in_size) if layout else (t_len, batch, in_size)
    feeds["X"] = rng.standard_normal(x_shape).astype(np.float32)
    feeds["sequence_lens"] = np.array([4, 3, 1], dtype=np.int32)
    attrs = dict(attrs, hidden_size=hs)
    outputs = ["Y", "Y_h", "Y_c"] if op_type == "LSTM" else ["Y", "Y_h"]
    want, got, _, _ = _run_both(op_type, feeds, attrs, outputs)
    for w, g in zip(want, got, strict=True):
        assert g.dtype == np.float32 and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_float64_preserved():
    rng = np.random.default_rng(2)
    op = get_op("GRU")
    x = rng.standard_normal((3, 2, 4))
    w = rng.standard_normal((1, 9, 4))
    r = rng.standard_normal((1, 9, 3))
    y, y_h = op.kernel([x, w, r], op.resolve_attrs({}), None)
    assert y.dtype == np.float64 and y.shape == (3, 1, 2, 3)
    np.testing.assert_array_equal(y[-1], y_h)


@pytest.mark.parametrize("lens", [[4, 5, 1], [4, -1, 2]])
def test_sequence_lens_outside_the_sequence_is_refused(lens):
    """onnxruntime refuses these too; a length past seq_length would read no input."""
    rng = np.random.default_rng(3)
    op = get_op("GRU")
    x = rng.standard_normal((4, 3, 2)).astype(np.float32)
    w = rng.standard_normal((1, 9, 2)).astype(np.float32)
    r = rng.standard_normal((1, 9, 3)).astype(np.float32)
    with pytest.raises(ShapeError, match=r"sequence_lens\[1\] = -?\d is outside \[0, 4\]"):
        op.kernel([x, w, r, None, np.array(lens, np.int32)],
                  op.resolve_attrs({"hidden_size": 3}), None)


# ---------------------------------------------------------------------------------------
# The stacked-direction time loops against onnxruntime, across the attribute space

def _loop_cases():
    rng = np.random.default_rng(7)
    cases = []
    for op_type in ("RNN", "GRU", "LSTM"):
        for direction in ("forward", "reverse", "bidirectional"):
            for k in range(4):
                attrs = dict(direction=direction)
                if k % 2:
                    attrs["clip"] = 1.5
                if op_type == "GRU":
                    attrs["linear_before_reset"] = k // 2
                if op_type == "LSTM":
                    attrs["input_forget"] = int(rng.integers(2))
                for hs in (1, 5):  # H = 1: every gate a strided [D, B, 1] slice
                    cases.append((op_type, attrs, op_type == "LSTM" and k >= 2, k >= 2, hs))
    return cases


@pytest.mark.parametrize("op_type,attrs,peepholes,with_lens,hs", _loop_cases(),
                         ids=lambda v: str(v) if not isinstance(v, dict) else
                         "-".join(f"{k}{v_}" for k, v_ in v.items()))
def test_time_loops_vs_onnxruntime(op_type, attrs, peepholes, with_lens, hs):
    """Every direction, clip, linear_before_reset, input_forget and peephole setting,
    with and without sequence_lens and initial states, on weights large enough to
    saturate the gates (pre-activations reach +-30)."""
    rng = np.random.default_rng(zlib.crc32(repr((op_type, attrs, peepholes, hs)).encode()))
    t_len, batch, in_size = 6, 3, 4
    nd = 2 if attrs["direction"] == "bidirectional" else 1
    feeds = _weights(rng, op_type, nd, hs, in_size, peepholes=peepholes)
    feeds["W"] *= 6
    feeds["X"] = rng.standard_normal((t_len, batch, in_size)).astype(np.float32)
    if with_lens:
        feeds["sequence_lens"] = np.array([6, 1, 3], dtype=np.int32)
        feeds["initial_h"] = rng.standard_normal((nd, batch, hs)).astype(np.float32)
        if op_type == "LSTM":
            feeds["initial_c"] = rng.standard_normal((nd, batch, hs)).astype(np.float32)
    before = {k: v.copy() for k, v in feeds.items()}
    outputs = ["Y", "Y_h", "Y_c"] if op_type == "LSTM" else ["Y", "Y_h"]
    want, got, _, _ = _run_both(op_type, feeds, dict(attrs, hidden_size=hs), outputs)
    for w, g in zip(want, got, strict=True):
        assert g.dtype == np.float32 and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    for k, v in feeds.items():  # the loops work on their own copies of the states
        np.testing.assert_array_equal(v, before[k], err_msg=k)


def test_gates_saturate_without_warnings_or_nans():
    """Pre-activations far beyond float32's exp range give gates of exactly 0 and 1."""
    op = get_op("LSTM")
    x = np.array([[[1e3]], [[-1e3]], [[np.inf]], [[-np.inf]]], np.float32)
    w = np.ones((1, 4, 1), np.float32)
    r = np.zeros((1, 4, 1), np.float32)
    with np.errstate(all="raise"):
        y, y_h, y_c = op.kernel([x, w, r], op.resolve_attrs({"hidden_size": 1}), None)
    # i = o = f = 1 and g = 1 first: c = 1, h = tanh(1); then 0 gates keep nothing
    np.testing.assert_allclose(y.ravel(), [np.tanh(1), 0, np.tanh(1), 0], rtol=1e-6)
    assert y_c.item() == 0


@pytest.mark.parametrize("op_type", ["RNN", "GRU", "LSTM"])
def test_empty_sequence_and_batch(op_type):
    op = get_op(op_type)
    g = _GATES[op_type]
    w = np.ones((2, 2 * g, 3), np.float32)
    r = np.ones((2, 2 * g, 2), np.float32)
    attrs = op.resolve_attrs({"hidden_size": 2, "direction": "bidirectional"})
    h0 = np.arange(2 * 4 * 2, dtype=np.float32).reshape(2, 4, 2)
    out = op.kernel([np.zeros((0, 4, 3), np.float32), w, r, None, None, h0], attrs, None)
    assert out[0].shape == (0, 2, 4, 2)
    np.testing.assert_array_equal(out[1], h0)  # no step: the initial state
    out = op.kernel([np.zeros((5, 0, 3), np.float32), w, r], attrs, None)
    assert out[0].shape == (5, 2, 0, 2) and out[1].shape == (2, 0, 2)


@pytest.mark.parametrize("op, names", [("RNN", ["Relu"]), ("GRU", ["Sigmoid", "Tanh"]),
                                       ("LSTM", ["Sigmoid", "Tanh", "Tanh"])])
def test_bidirectional_needs_both_directions_activations(op, names):
    """A bidirectional op given one direction's activations is refused by name, as the
    spec (a list per direction) and onnxruntime have it; it was applied to both."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    import onegraph as og
    from onegraph.convert import from_onnx

    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    x = np.ones((2, 1, 3), np.float32)
    w = np.full((2, gates * 4, 3), 0.1, np.float32)
    r = np.full((2, gates * 4, 4), 0.1, np.float32)
    node = helper.make_node(op, ["X", "W", "R"], ["Y"], hidden_size=4,
                            direction="bidirectional", activations=names)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 1, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    with pytest.raises(Exception):  # onnxruntime refuses it too (the oracle)
        ort.InferenceSession(model.SerializeToString(),
                             providers=["CPUExecutionProvider"]).run(None, {"X": x})
    with pytest.raises(og.OneGraphError, match=rf"{op}.*{2 * len(names)} activations "
                                               r"\(\d per direction, bidirectional\)"):
        og.Session(from_onnx(model)).run(["Y"], {"X": x})

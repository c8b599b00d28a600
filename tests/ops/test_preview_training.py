"""Adagrad, Adam and Momentum (`ai.onnx.preview.training`) against independent oracles.

Oracles: `onnx.reference.ReferenceEvaluator` on one-node models (seeded random values,
several tensors at once, every mode and attribute, T = 0 and T > 0, float and double),
run through ONNX import and the Session; one step of each optimizer worked out by hand;
the exported model passing the ONNX checker and reproducing the outputs in the
reference evaluator (onnxruntime lacks these ops). Plus inference vs the kernel's
shapes and the named errors for malformed inputs.
"""

import numpy as np
import pytest

from onegraph.errors import OneGraphError, OpAttributeError, ShapeError
from onegraph.ops import KernelContext, TensorInfo, get_op

onnx = pytest.importorskip("onnx")

from onnx import helper  # noqa: E402

DOMAIN = "ai.onnx.preview.training"
STATES = {"Adagrad": ("H",), "Adam": ("V", "H"), "Momentum": ("V",)}


def _model(op, r, t, groups, attrs):
    """One-node model; `groups` lists per kind (X, G, states...) the arrays of every X."""
    feeds = {"R": r, "T": t}
    names_in = ["R", "T"]
    kinds = ("X", "G") + STATES[op]
    for kind, arrays in zip(kinds, groups):
        for i, a in enumerate(arrays):
            feeds[f"{kind}{i}"] = a
            names_in.append(f"{kind}{i}")
    names_out = [f"{kind}{i}_new" for kind in ("X",) + STATES[op]
                 for i in range(len(groups[0]))]
    node = helper.make_node(op, names_in, names_out, domain=DOMAIN, **attrs)
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [node], "g",
        [vi(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for n, a in feeds.items()],
        [vi(n, helper.np_dtype_to_tensor_dtype(groups[0][0].dtype), None) for n in names_out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                    helper.make_opsetid(DOMAIN, 1)])
    model.ir_version = 9
    return model, feeds, names_out


def _reference(model, feeds):
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(model).run(None, feeds)


def _ours(model, feeds, names):
    from onegraph import Session
    from onegraph.convert import from_onnx

    return Session(from_onnx(model)).run(names, feeds)


def _kernel(op, inputs, attrs):
    opdef = get_op(op, DOMAIN)
    return opdef.kernel(list(inputs), opdef.resolve_attrs(attrs), KernelContext())


def _random_groups(rng, op, shapes, dtype):
    groups = [[rng.standard_normal(s).astype(dtype) for s in shapes]]  # X
    groups.append([rng.standard_normal(s).astype(dtype) for s in shapes])  # G
    for _ in STATES[op]:  # H must stay non-negative (accumulated squares)
        groups.append([np.abs(rng.standard_normal(s)).astype(dtype) for s in shapes])
    return groups


ATTR_CASES = [
    ("Adagrad", {}),
    ("Adagrad", {"decay_factor": 0.1, "epsilon": 1e-4, "norm_coefficient": 0.01}),
    ("Adam", {}),
    ("Adam", {"alpha": 0.8, "beta": 0.95, "epsilon": 1e-3, "norm_coefficient": 0.02,
              "norm_coefficient_post": 0.1}),
    # The reference evaluator needs norm_coefficient spelt out on Momentum.
    ("Momentum", {"alpha": 0.9, "beta": 0.5, "mode": "standard", "norm_coefficient": 0.0}),
    ("Momentum", {"alpha": 0.7, "beta": 0.3, "mode": "nesterov", "norm_coefficient": 0.05}),
]


@pytest.mark.parametrize("op,attrs", ATTR_CASES)
@pytest.mark.parametrize("t", [0, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_against_reference(op, attrs, t, dtype):
    rng = np.random.default_rng([len(op), t, len(attrs)])
    shapes = [(3, 4), (5,), (), (2, 0)]  # several tensors, a scalar and an empty one
    groups = _random_groups(rng, op, shapes, dtype)
    model, feeds, names = _model(op, np.array(0.1, dtype), np.array(t, np.int64), groups,
                                 attrs)
    got = _ours(model, feeds, names)
    want = _reference(model, feeds)
    assert len(got) == len(want) == len(names)
    # The reference rounds Adam's results to float32 when it updates several tensors.
    single = dtype == np.float64 and op != "Adam"
    for g, w, name in zip(got, want, names):
        src = feeds[name[:-len("_new")]]
        assert g.dtype == src.dtype and g.shape == src.shape, name
        np.testing.assert_allclose(g, w, rtol=1e-12 if single else 1e-5,
                                   atol=1e-12 if single else 1e-6, err_msg=name)


def test_single_tensor_matches_reference():
    rng = np.random.default_rng(7)
    for op, attrs in ATTR_CASES:
        groups = _random_groups(rng, op, [(2, 3)], np.float64)
        model, feeds, names = _model(op, np.array(0.05), np.array(1, np.int64), groups, attrs)
        for g, w in zip(_ours(model, feeds, names), _reference(model, feeds)):
            assert g.dtype == w.dtype == np.float64
            # The reference forms 1 - norm_coefficient_post in float32 (the attribute's
            # type); we keep such scalar arithmetic in double.
            np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-12)


def test_adam_by_hand():
    # x=1, g=2, v=0.5, h=1, alpha=.5, beta=.75, T=2, R=.1, eps=0, norm=.5, post=.1
    # g_reg = 0.5*1 + 2 = 2.5; v' = .25 + 1.25 = 1.5; h' = .75 + .25*6.25 = 2.3125
    # r' = .1 * sqrt(1 - .5625) / (1 - .25) = .1 * .661437... / .75
    # x' = 0.9 * (1 - r' * 1.5 / sqrt(2.3125))
    r_adj = 0.1 * np.sqrt(1 - 0.75 ** 2) / (1 - 0.5 ** 2)
    x_new = 0.9 * (1 - r_adj * 1.5 / np.sqrt(2.3125))
    one = np.ones(1)
    out = _kernel("Adam", [np.array(0.1), np.array(2), one, 2 * one, 0.5 * one, one],
                  {"alpha": 0.5, "beta": 0.75, "epsilon": 0.0, "norm_coefficient": 0.5,
                   "norm_coefficient_post": 0.1})
    np.testing.assert_allclose([o[0] for o in out], [x_new, 1.5, 2.3125], rtol=1e-14)


def test_adam_first_step_has_no_bias_correction():
    one = np.ones(1)
    (x, v, h) = _kernel("Adam", [np.array(0.1), np.array(0), one, one, 0 * one, 0 * one],
                        {"alpha": 0.5, "beta": 0.75, "epsilon": 0.0})
    # v' = .5, h' = .25, step = .1 * .5 / .5
    np.testing.assert_allclose([x[0], v[0], h[0]], [0.9, 0.5, 0.25], rtol=1e-14)


def test_adagrad_by_hand():
    # r = 1 / (1 + 4 * .25) = .5; g_reg = .5*2 + 3 = 4; h' = 9 + 16 = 25; x' = 2 - .5*4/5
    x, h = _kernel("Adagrad", [np.array(1.0), np.array(4), np.array([2.0]), np.array([3.0]),
                               np.array([9.0])],
                   {"decay_factor": 0.25, "epsilon": 0.0, "norm_coefficient": 0.5})
    np.testing.assert_allclose([x[0], h[0]], [1.6, 25.0], rtol=1e-14)


@pytest.mark.parametrize("mode,t,want_x,want_v", [
    # g_reg = .5*2 + 1 = 2; T>0: v' = .9*3 + .5*2 = 3.7, T=0: v' = 2.7 + 2 = 4.7
    ("standard", 1, 2 - 0.1 * 3.7, 3.7),
    ("standard", 0, 2 - 0.1 * 4.7, 4.7),
    ("nesterov", 1, 2 - 0.1 * (2 + 0.9 * 3.7), 3.7),
])
def test_momentum_by_hand(mode, t, want_x, want_v):
    x, v = _kernel("Momentum", [np.array(0.1), np.array(t), np.array([2.0]), np.array([1.0]),
                                np.array([3.0])],
                   {"alpha": 0.9, "beta": 0.5, "mode": mode, "norm_coefficient": 0.5})
    np.testing.assert_allclose([x[0], v[0]], [want_x, want_v], rtol=1e-14)


def test_broadcast_gradient_and_state():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    x_new, v_new = _kernel("Momentum", [np.float32(0.1), np.int64(1), x,
                                        np.ones(3, np.float32), np.float32(0)],
                           {"alpha": 0.9, "beta": 1.0, "mode": "standard"})
    assert x_new.shape == v_new.shape == (2, 3)
    np.testing.assert_allclose(x_new, x - 0.1)


def test_export_round_trip_in_reference():
    from onegraph.convert import from_onnx, to_onnx

    rng = np.random.default_rng(3)
    for op, attrs in ATTR_CASES:
        groups = _random_groups(rng, op, [(2,), (3, 2)], np.float32)
        model, feeds, names = _model(op, np.array(0.1, np.float32), np.array(2, np.int64),
                                     groups, attrs)
        exported = to_onnx(from_onnx(model))
        onnx.checker.check_model(exported, full_check=True)
        for g, w in zip(_reference(exported, feeds), _reference(model, feeds)):
            np.testing.assert_allclose(g, w, rtol=1e-6)


def test_infer_matches_kernel():
    rng = np.random.default_rng(5)
    for op, attrs in ATTR_CASES:
        groups = _random_groups(rng, op, [(2, 3), (4,)], np.float64)
        inputs = [np.array(0.1), np.array(1)] + [a for g in groups for a in g]
        opdef = get_op(op, DOMAIN)
        infos = opdef.infer(opdef.resolve_attrs(attrs),
                            [TensorInfo(a.dtype, a.shape) for a in inputs])
        outs = _kernel(op, inputs, attrs)
        assert [(i.dtype, tuple(i.shape)) for i in infos] == [(o.dtype, o.shape) for o in outs]


@pytest.mark.parametrize("op,count", [("Adagrad", 4), ("Adagrad", 7), ("Adam", 8),
                                      ("Adam", 9), ("Momentum", 6), ("Momentum", 2)])
def test_bad_input_count(op, count):
    inputs = [np.array(0.1), np.array(1)] + [np.ones(2)] * (count - 2)
    attrs = {"alpha": 0.9, "beta": 0.9, "mode": "standard"} if op == "Momentum" else {}
    with pytest.raises(OpAttributeError, match=op):
        _kernel(op, inputs, attrs)
    opdef = get_op(op, DOMAIN)
    with pytest.raises(OpAttributeError, match=op):
        opdef.infer(opdef.resolve_attrs(attrs), [TensorInfo(a.dtype, a.shape) for a in inputs])


def test_bad_inputs_and_attributes():
    one = np.ones(3)
    momentum = {"alpha": 0.9, "beta": 0.9, "mode": "standard"}
    with pytest.raises(OpAttributeError, match="Momentum: mode"):
        _kernel("Momentum", [np.array(0.1), np.array(1), one, one, one],
                {**momentum, "mode": "heavy-ball"})
    with pytest.raises(OpAttributeError, match="alpha"):
        get_op("Momentum", DOMAIN).resolve_attrs({"beta": 0.9, "mode": "standard"})
    with pytest.raises(ShapeError, match="Adagrad: R and T must be scalars"):
        _kernel("Adagrad", [np.ones(2), np.array(1), one, one, one], {})
    with pytest.raises(ShapeError, match="Adagrad: T must be"):
        _kernel("Adagrad", [np.array(0.1), np.array(1.0), one, one, one], {})
    with pytest.raises(ShapeError, match="Adam: input 3 .* does not broadcast"):
        _kernel("Adam", [np.array(0.1), np.array(1), one, np.ones(4), one, one], {})
    with pytest.raises(ShapeError, match="Adam: input 4 must be float"):
        _kernel("Adam", [np.array(0.1), np.array(1), one, one, np.ones(3, np.int64), one], {})


def test_bad_input_through_session_names_node():
    groups = [[np.ones(3, np.float32)], [np.ones(4, np.float32)], [np.ones(3, np.float32)]]
    model, feeds, names = _model("Adagrad", np.array(0.1, np.float32), np.array(1, np.int64),
                                 groups, {})
    with pytest.raises(OneGraphError, match="Adagrad"):
        _ours(model, feeds, names)

"""ai.onnx.preview.training's Gradient, built at import by onegraph's autodiff
(convert/onnx_gradient.py), against central finite differences of the forward model as
ONNX's reference evaluator computes it (float64, so a step of 1e-6 leaves differences
near 1e-9; onnxruntime has no float64 Conv), and against closed forms where the function
is a polynomial.

The models are the operator specification's own examples: W -> Conv -> H -> Gemm -> Y
with xs=[W, Z], zs=[X]; the gradient with respect to the intermediate H at a given value
H_1; a second derivative through a Gradient of a Gradient; and one training step of a
linear regression (Gradient feeding ai.onnx.preview.training's Adagrad).
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import onegraph as og
from onegraph.convert import from_onnx, to_onnx, unsupported_ops
from onegraph.errors import ConversionError

ort = pytest.importorskip("onnxruntime")

D = TensorProto.DOUBLE
TRAINING = "ai.onnx.preview.training"
STEP = 1e-6
# central differences in float64 at STEP: measured errors below 3e-9 on these models
FD_TOL = 1e-6


def _model(nodes, inputs, outputs, initializers=(), opset=18):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, t, s)
                                           for n, t, s in inputs],
                              [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
                              list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset),
                                                   helper.make_opsetid(TRAINING, 1)])


def _forward_only(model, keep: list[str]):
    """The model without its Gradient nodes (and what only they feed), fetching
    `keep`: what onnxruntime runs for the finite differences."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    nodes = [n for n in m.graph.node if n.domain != TRAINING]
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    del m.graph.output[:]
    m.graph.output.extend(helper.make_tensor_value_info(k, D, None) for k in keep)
    del m.opset_import[1:]
    return m


def _ort(model, feeds, fetch):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(fetch, feeds)


def _reference(model, feeds, fetch):
    return ReferenceEvaluator(model).run(fetch, feeds)


def _finite_difference(model, feeds, wrt: str, y: str) -> np.ndarray:
    """d sum(y) / d wrt by central differences, running the forward model in ONNX's
    reference evaluator."""
    forward = _forward_only(model, [y])
    base = feeds[wrt]
    grad = np.zeros_like(base)
    for i in np.ndindex(base.shape):
        plus, minus = base.copy(), base.copy()
        plus[i] += STEP
        minus[i] -= STEP
        hi = _reference(forward, {**feeds, wrt: plus}, [y])[0].sum()
        lo = _reference(forward, {**feeds, wrt: minus}, [y])[0].sum()
        grad[i] = (hi - lo) / (2 * STEP)
    return grad


def _spec_example(gradient_inputs=("W", "Z", "X")):
    """The spec's W -> Conv -> H -> Gemm -> Y, with Gradient(xs=[W, Z], zs=[X], y=Y)."""
    nodes = [helper.make_node("Conv", ["X", "W"], ["H4"], pads=[1, 1, 1, 1]),
             helper.make_node("Flatten", ["H4"], ["H"]),
             helper.make_node("Gemm", ["H", "Z"], ["Y"]),
             helper.make_node("Gradient", list(gradient_inputs), ["dY_dW", "dY_dZ"],
                              domain=TRAINING, xs=["W", "Z"], zs=["X"], y="Y")]
    inputs = [("X", D, [2, 1, 3, 3]), ("W", D, [2, 1, 3, 3]), ("Z", D, [18, 4])]
    outputs = [("Y", D, [2, 4]), ("dY_dW", D, [2, 1, 3, 3]), ("dY_dZ", D, [18, 4])]
    return _model(nodes, inputs, outputs)


def _feeds(rng, **shapes):
    return {k: rng.standard_normal(s) for k, s in shapes.items()}


def test_spec_example_matches_finite_differences():
    model = _spec_example()
    feeds = _feeds(np.random.default_rng(0), X=(2, 1, 3, 3), W=(2, 1, 3, 3), Z=(18, 4))
    y, dw, dz = og.Session(from_onnx(model)).run(["Y", "dY_dW", "dY_dZ"], feeds)
    np.testing.assert_allclose(y, _reference(_forward_only(model, ["Y"]), feeds, ["Y"])[0],
                               rtol=1e-12, atol=1e-12)
    assert dw.shape == (2, 1, 3, 3) and dz.shape == (18, 4)
    np.testing.assert_allclose(dw, _finite_difference(model, feeds, "W", "Y"), atol=FD_TOL)
    np.testing.assert_allclose(dz, _finite_difference(model, feeds, "Z", "Y"), atol=FD_TOL)


def test_spec_example_export_names_the_gradient_ops_onnx_lacks():
    """Conv's gradient is onegraph's ConvGradInput / ConvGradFilter, which ONNX has no
    op for: to_onnx refuses, naming them, rather than writing a model that cannot run."""
    exported = from_onnx(_spec_example())
    with pytest.raises(ConversionError, match="ops without an ONNX equivalent: "
                                              "onegraph::ConvGradInput"):
        to_onnx(exported)


def _regression(n=8):
    """loss = mean((X W - T)^2) and Gradient(xs=[W], zs=[X, T], y=loss) -> G."""
    return [helper.make_node("MatMul", ["X", "W"], ["P"]),
            helper.make_node("Sub", ["P", "T"], ["E"]),
            helper.make_node("Mul", ["E", "E"], ["E2"]),
            helper.make_node("ReduceMean", ["E2"], ["loss"], keepdims=0),
            helper.make_node("Gradient", ["W", "X", "T"], ["G"], domain=TRAINING,
                             xs=["W"], zs=["X", "T"], y="loss")], \
        [("X", D, [n, 3]), ("W", D, [3, 1]), ("T", D, [n, 1])]


def test_gradient_of_squared_errors_exports_to_onnxruntime():
    """Y = (X W - T)^2 elementwise (its gradient is of sum(Y)): the gradient graph is
    MatMul, Transpose, Mul and the like, which ONNX has, so the export runs."""
    nodes, inputs = _regression()
    nodes[-1] = helper.make_node("Gradient", ["W", "X", "T"], ["G"], domain=TRAINING,
                                 xs=["W"], zs=["X", "T"], y="E2")
    model = _model(nodes[:3] + nodes[4:], inputs, [("E2", D, [8, 1]), ("G", D, [3, 1])])
    feeds = _feeds(np.random.default_rng(1), X=(8, 3), W=(3, 1), T=(8, 1))
    imported = from_onnx(model)
    want = og.Session(imported).run(["E2", "G"], feeds)
    exported = to_onnx(imported)
    onnx.checker.check_model(exported, full_check=True)
    assert not any(n.domain == TRAINING for n in exported.graph.node)
    got = _ort(exported, feeds, ["E2", "G"])
    x, w, t = feeds["X"], feeds["W"], feeds["T"]
    np.testing.assert_allclose(got[1], 2 * x.T @ (x @ w - t), rtol=1e-12)
    for w_, g_ in zip(want, got):
        np.testing.assert_allclose(g_, w_, rtol=1e-12, atol=1e-15)


def test_gradient_with_respect_to_an_intermediate_at_a_given_value():
    """The spec's Gradient(xs=[H, Z], y=Y) fed H_1: dY/dH at H = H_1, not at the H the
    graph computes (Y = H Z, so d sum(Y) / dH = ones @ Z^T whatever H is; dY/dZ is
    H_1^T @ ones)."""
    nodes = [helper.make_node("Relu", ["X"], ["H"]),
             helper.make_node("MatMul", ["H", "Z"], ["Y"]),
             helper.make_node("Gradient", ["H1", "Z"], ["dY_dH", "dY_dZ"],
                              domain=TRAINING, xs=["H", "Z"], y="Y")]
    model = _model(nodes, [("X", D, [3, 5]), ("Z", D, [5, 2]), ("H1", D, [3, 5])],
                   [("dY_dH", D, [3, 5]), ("dY_dZ", D, [5, 2])])
    feeds = _feeds(np.random.default_rng(2), X=(3, 5), Z=(5, 2), H1=(3, 5))
    dh, dz = og.Session(from_onnx(model)).run(["dY_dH", "dY_dZ"], feeds)
    np.testing.assert_allclose(dh, np.ones((3, 2)) @ feeds["Z"].T, rtol=1e-12)
    np.testing.assert_allclose(dz, feeds["H1"].T @ np.ones((3, 2)), rtol=1e-12)
    relu_h = np.maximum(feeds["X"], 0).T @ np.ones((3, 2))
    assert not np.allclose(dz, relu_h)  # the given H_1, not the graph's H


def test_second_derivative_through_a_gradient_of_a_gradient():
    """O = sum(W^3 * X): dO/dW = 3 W^2 X, and the gradient of sum(dO/dW) is 6 W X."""
    nodes = [helper.make_node("Mul", ["W", "W"], ["W2"]),
             helper.make_node("Mul", ["W2", "W"], ["W3"]),
             helper.make_node("Mul", ["W3", "X"], ["P"]),
             helper.make_node("ReduceSum", ["P"], ["O"], keepdims=0),
             helper.make_node("Gradient", ["W", "X"], ["dO_dW"], domain=TRAINING,
                              xs=["W"], zs=["X"], y="O"),
             helper.make_node("Gradient", ["W", "X"], ["d2O_dW2"], domain=TRAINING,
                              xs=["W"], zs=["X"], y="dO_dW")]
    model = _model(nodes, [("W", D, [4]), ("X", D, [4])],
                   [("O", D, []), ("dO_dW", D, [4]), ("d2O_dW2", D, [4])])
    feeds = _feeds(np.random.default_rng(3), W=(4,), X=(4,))
    w, x = feeds["W"], feeds["X"]
    o, d1, d2 = og.Session(from_onnx(model)).run(["O", "dO_dW", "d2O_dW2"], feeds)
    np.testing.assert_allclose(o, (w ** 3 * x).sum(), rtol=1e-12)
    np.testing.assert_allclose(d1, 3 * w ** 2 * x, rtol=1e-12)
    np.testing.assert_allclose(d2, 6 * w * x, rtol=1e-12)


def test_one_training_step_gradient_into_adagrad():
    """loss = mean((X W - T)^2); Gradient gives dloss/dW = 2 X^T (X W - T) / n, and
    Adagrad (ai.onnx.preview.training) takes the step, as a training graph in ONNX
    spells it."""
    n = 8
    nodes, inputs = _regression(n)
    nodes.append(helper.make_node("Adagrad", ["R", "step", "W", "G", "H"],
                                  ["W_new", "H_new"], domain=TRAINING, decay_factor=0.0,
                                  epsilon=1e-6, norm_coefficient=0.0))
    inputs += [("H", D, [3, 1]), ("R", D, []), ("step", TensorProto.INT64, [])]
    model = _model(nodes, inputs, [("loss", D, []), ("G", D, [3, 1]), ("W_new", D, [3, 1]),
                                   ("H_new", D, [3, 1])])
    rng = np.random.default_rng(4)
    feeds = _feeds(rng, X=(n, 3), W=(3, 1), T=(n, 1))
    feeds.update(H=np.zeros((3, 1)), R=np.array(0.1), step=np.array(0, np.int64))
    loss, g, w_new, h_new = og.Session(from_onnx(model)).run(
        ["loss", "G", "W_new", "H_new"], feeds)
    x, w, t = feeds["X"], feeds["W"], feeds["T"]
    want_g = 2 * x.T @ (x @ w - t) / n
    np.testing.assert_allclose(g, want_g, rtol=1e-12)
    np.testing.assert_allclose(h_new, want_g ** 2, rtol=1e-12)
    np.testing.assert_allclose(w_new, w - 0.1 * want_g / (np.abs(want_g) + 1e-6),
                               rtol=1e-9)
    assert loss == pytest.approx(((x @ w - t) ** 2).mean(), rel=1e-12)


def test_an_x_that_does_not_reach_y_gets_zeros_and_omitted_outputs_are_skipped():
    nodes = [helper.make_node("Mul", ["A", "A"], ["Y"]),
             helper.make_node("Gradient", ["A", "B", "C"], ["dA", "", "dC"],
                              domain=TRAINING, xs=["A", "B", "C"], y="Y")]
    model = _model(nodes, [("A", D, [2]), ("B", D, [3]), ("C", D, [2, 2])],
                   [("dA", D, [2]), ("dC", D, [2, 2])])
    feeds = {"A": np.array([1.5, -2.0]), "B": np.ones(3), "C": np.ones((2, 2))}
    da, dc = og.Session(from_onnx(model)).run(["dA", "dC"], feeds)
    np.testing.assert_array_equal(da, [3.0, -4.0])
    np.testing.assert_array_equal(dc, np.zeros((2, 2)))
    assert dc.dtype == np.float64


def _gradient_model(**attrs):
    inputs = attrs.pop("inputs", ["A"])
    nodes = [helper.make_node("Mul", ["A", "A"], ["Y"]),
             helper.make_node("Gradient", inputs, ["dA"], domain=TRAINING, **attrs)]
    return _model(nodes, [("A", D, [2])], [("dA", D, [2])])


@pytest.mark.parametrize("attrs, message", [
    ({"xs": ["nope"], "y": "Y"}, r"Gradient node 'g': x 'nope' names no tensor"),
    ({"xs": ["A"], "y": "missing"}, r"Gradient node 'g': y 'missing' names no tensor"),
    ({"xs": ["A"], "zs": ["Y"], "y": "Y"},
     r"takes one input per name of xs and zs \(1 \+ 1\), got 1"),
    ({"y": "Y"}, r"attribute 'xs' is required"),
])
def test_malformed_gradient_nodes_are_refused_by_name(attrs, message):
    model = _gradient_model(**attrs)
    model.graph.node[1].name = "g"
    with pytest.raises(ConversionError, match=message):
        from_onnx(model)


def test_integer_y_is_refused():
    nodes = [helper.make_node("Cast", ["A"], ["Y"], to=TensorProto.INT64),
             helper.make_node("Gradient", ["A"], ["dA"], name="g", domain=TRAINING,
                              xs=["A"], y="Y")]
    model = _model(nodes, [("A", D, [2])], [("dA", D, [2])])
    with pytest.raises(ConversionError, match="y 'Y' is INT64; only a floating-point y"):
        from_onnx(model)


def test_gradient_inside_a_subgraph_is_refused():
    inner = helper.make_graph(
        [helper.make_node("Mul", ["A", "A"], ["Y"]),
         helper.make_node("Gradient", ["A"], ["dA"], name="inner_g", domain=TRAINING,
                          xs=["A"], y="Y")],
        "branch", [], [helper.make_tensor_value_info("dA", D, [2])])
    other = helper.make_graph([helper.make_node("Identity", ["A"], ["A_out"])], "other", [],
                              [helper.make_tensor_value_info("A_out", D, [2])])
    nodes = [helper.make_node("If", ["c"], ["out"], then_branch=inner, else_branch=other)]
    model = _model(nodes, [("A", D, [2]), ("c", TensorProto.BOOL, [])],
                   [("out", D, [2])])
    with pytest.raises(ConversionError, match="Gradient node 'inner_g' is inside the "
                                              "subgraph 'branch'"):
        from_onnx(model)


def test_unsupported_ops_lists_gradient_only_where_it_is_not_built():
    nodes, inputs = _regression()
    assert unsupported_ops(_model(nodes, inputs, [("G", D, [3, 1])])) == {}
    branch = helper.make_graph(nodes, "branch", [], [helper.make_tensor_value_info("G", D,
                                                                                [3, 1])])
    other = helper.make_graph([helper.make_node("Identity", ["W"], ["W_out"])], "other", [],
                              [helper.make_tensor_value_info("W_out", D, [3, 1])])
    nested = _model([helper.make_node("If", ["c"], ["out"], then_branch=branch,
                                      else_branch=other)],
                    inputs + [("c", TensorProto.BOOL, [])], [("out", D, [3, 1])])
    # (the unnamed node is the branch's fifth: "#4")
    assert unsupported_ops(nested) == {f"{TRAINING}::Gradient": (1, "#4")}


def test_an_op_without_a_gradient_rule_on_the_way_is_named():
    nodes = [helper.make_node("Det", ["A"], ["Y"], name="det"),
             helper.make_node("Gradient", ["A"], ["dA"], name="g", domain=TRAINING,
                              xs=["A"], y="Y")]
    model = _model(nodes, [("A", D, [2, 2])], [("dA", D, [2, 2])])
    with pytest.raises(ConversionError, match="Gradient node 'g': cannot build the gradient "
                                              "of 'Y': op 'Det' .node 'det'. has no gradient"):
        from_onnx(model)

"""og.Assert, og.assert_* and og.check_numerics: runs that meet a false condition or a
NaN/Inf raise ExecutionError naming the node; others pass values through unchanged."""

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import to_onnx
from onegraph.errors import ExecutionError, ShapeError
from onegraph.format import DType


def _graph():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [3], name="x")
    return g, x


def test_assert_runs_only_when_depended_on_and_shows_its_data():
    g, x = _graph()
    with g.as_default():
        check = og.Assert(og.reduce_all(x > 0), ["x must be positive, got", x],
                          summarize=2, name="positive")
        unchecked = x * 2.0
        with og.control_dependencies([check]):
            checked = og.identity(x) * 2.0
    sess = og.Session(g)
    bad = np.array([1.0, -2.0, 3.0], np.float32)
    np.testing.assert_array_equal(sess.run(unchecked, {x: bad}), bad * 2)
    with pytest.raises(ExecutionError, match=r"node 'positive' \(Assert\): assertion "
                                             r"failed: x must be positive, got "
                                             r"\[1.0, -2.0, \.\.\.\] \(shape \[3\]\)"):
        sess.run(checked, {x: bad})
    good = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_array_equal(sess.run(checked, {x: good}), good * 2)
    sess.run(check, {x: good})  # fetching the op itself runs it


def test_assert_arguments_are_checked_while_building():
    g, x = _graph()
    with g.as_default():
        with pytest.raises(ShapeError, match="condition must be a bool tensor"):
            og.Assert(x, ["data"])
        with pytest.raises(TypeError, match="data must be a list"):
            og.Assert(og.reduce_all(x > 0), "data")
        with pytest.raises(TypeError, match="summarize must be an int"):
            og.Assert(og.reduce_all(x > 0), [], summarize=2.5)


@pytest.mark.parametrize("check, good, bad", [
    (og.assert_equal, [1.0, 2.0, 3.0], [1.0, 2.5, 3.0]),
    (og.assert_less, [0.0, 1.0, 2.0], [0.0, 2.0, 2.0]),
    (og.assert_greater, [2.0, 3.0, 4.0], [2.0, 3.0, 3.0]),
])
def test_assert_comparisons_elementwise(check, good, bad):
    g, x = _graph()
    with g.as_default():
        op = check(x, [1.0, 2.0, 3.0], message="checking x")
    sess = og.Session(g)
    sess.run(op, {x: np.array(good, np.float32)})
    with pytest.raises(ExecutionError, match=r"checking x Condition x \S+ y did not hold "
                                             r"element-wise: x \(name: x\) ="):
        sess.run(op, {x: np.array(bad, np.float32)})


def test_check_numerics_names_nan_and_inf_and_passes_finite_values():
    g, x = _graph()
    with g.as_default():
        y = og.check_numerics(og.log(x), "log of x")
        dy = og.gradients(og.reduce_sum(y), [x])[0]
    sess = og.Session(g)
    with pytest.raises(ExecutionError, match="log of x: Tensor had NaN values"):
        sess.run(y, {x: np.array([1.0, -1.0, 2.0], np.float32)})
    with pytest.raises(ExecutionError, match="log of x: Tensor had Inf values"):
        sess.run(y, {x: np.array([1.0, 0.0, 2.0], np.float32)})
    with pytest.raises(ExecutionError, match="Tensor had NaN and Inf values"):
        sess.run(y, {x: np.array([0.0, -1.0, 2.0], np.float32)})
    good = np.array([1.0, 2.0, 4.0], np.float32)
    got, grad = sess.run([y, dy], {x: good})
    np.testing.assert_allclose(got, np.log(good), rtol=1e-6)
    np.testing.assert_allclose(grad, 1 / good, rtol=1e-6)


def test_check_numerics_checks_the_gradient_too():
    g, x = _graph()
    with g.as_default():
        scale = og.placeholder(og.float32, [], name="scale")
        y = og.check_numerics(x * 1.0, "x")
        dx = og.gradients(y, [x], grad_ys=[og.fill([3], scale)])[0]
    with pytest.raises(ExecutionError, match=r"x \(gradient\): Tensor had Inf values"):
        og.Session(g).run(dx, {x: np.ones(3, np.float32), scale: np.inf})


def test_check_numerics_exports_as_an_identity():
    g, x = _graph()
    with g.as_default():
        y = og.check_numerics(x * 2.0, "doubled")
    proto = to_onnx(g.to_model(signatures={"serving": og.signature({"x": x}, {"y": y})}))
    assert "CheckNumerics" not in [n.op_type for n in proto.graph.node]


def test_check_numerics_sees_bfloat16_and_refuses_integers():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(DType.BFLOAT16, [2], name="x")
        y = og.check_numerics(x, "bf16")
        with pytest.raises(TypeError, match="must be a float tensor"):   # TF1's class
            og.check_numerics(og.constant([1, 2]), "ints")
    bad = np.array([1.0, np.nan], np.float32).astype(DType.BFLOAT16.numpy)
    with pytest.raises(ExecutionError, match="bf16: Tensor had NaN values"):
        og.Session(g).run(y, {x: bad})

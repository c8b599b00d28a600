"""Fixes from a second structure-aware fuzz of from_onnx + Session (the ONNX backend
node tests, each mutated: attribute values and types, node inputs, initializers,
declared input types, feeds of other shapes and dtypes, swapped op types).

Each case is a bad input that reached numpy (or Python) and came back as an
ExecutionError wrapping a raw ValueError/IndexError, a huge allocation, or a hang;
each now gets a named onegraph error saying what is wrong (or, where the input is
valid ONNX, a result).
"""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto as T  # noqa: E402
from onnx import helper  # noqa: E402

from onegraph.convert import from_onnx  # noqa: E402
from onegraph.errors import (OpAttributeError, ResourceExhaustedError,  # noqa: E402
                             ShapeError)
from onegraph.train.session import Session  # noqa: E402

F32 = np.float32


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _run(node, inputs, feeds, opset=21, outputs=None, domain_opsets=()):
    """Import a one-node model (graph inputs `inputs`, outputs undeclared in shape) and
    run it on `feeds`; returns the outputs."""
    outs = outputs or [_vi(n, T.UNDEFINED, None) for n in node.output]
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v)
                                              for d, v in domain_opsets]
    model = helper.make_model(helper.make_graph([node], "g", inputs, outs),
                              opset_imports=ops)
    model.ir_version = 10
    return Session(from_onnx(model)).run([o.name for o in outs], feeds)


def _float_out(name):
    return [_vi(name, T.FLOAT, None)]


# --------------------------------------------------------------------- shape ops

@pytest.mark.parametrize("shape, match", [
    ([2, -3], r"node 'ex' \(Expand\).*shape \[2, -3\] has a negative dim"),
    ([2, 4], r"node 'ex' \(Expand\).*cannot broadcast"),
])
def test_expand_bad_shape_is_a_shape_error(shape, match):
    node = helper.make_node("Expand", ["x", "s"], ["y"], name="ex")
    with pytest.raises(ShapeError, match=match):
        _run(node, [_vi("x", T.FLOAT, [2, 3]), _vi("s", T.INT64, [2])],
             {"x": np.ones((2, 3), F32), "s": np.array(shape, np.int64)},
             outputs=_float_out("y"))


def test_expand_to_a_huge_shape_is_refused_before_allocating():
    node = helper.make_node("Expand", ["x", "s"], ["y"], name="ex")
    with pytest.raises(ResourceExhaustedError, match=r"node 'ex' \(Expand\).*over the limit"):
        _run(node, [_vi("x", T.FLOAT, [2, 3]), _vi("s", T.INT64, [3])],
             {"x": np.ones((2, 3), F32), "s": np.array([10**9, 2, 3], np.int64)},
             outputs=_float_out("y"))


def test_constant_of_shape_huge_is_refused_before_allocating():
    node = helper.make_node("ConstantOfShape", ["s"], ["y"], name="cs")
    with pytest.raises(ResourceExhaustedError,
                       match=r"node 'cs' \(ConstantOfShape\).*over the limit"):
        _run(node, [_vi("s", T.INT64, [2])], {"s": np.array([60000, 10000], np.int64)},
             outputs=_float_out("y"))


def test_concat_of_inputs_of_different_rank_is_a_shape_error():
    node = helper.make_node("Concat", ["a", "b"], ["y"], name="cc", axis=0)
    with pytest.raises(ShapeError, match=r"node 'cc' \(Concat\).*differ in rank"):
        _run(node, [_vi("a", T.FLOAT, None), _vi("b", T.FLOAT, None)],
             {"a": np.ones((2, 3), F32), "b": np.ones(3, F32)}, outputs=_float_out("y"))


def test_matmul_of_a_scalar_fed_where_undeclared_is_a_shape_error():
    node = helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")
    with pytest.raises(ShapeError, match=r"node 'mm' \(MatMul\).*scalar operands"):
        _run(node, [_vi("a", T.FLOAT, None), _vi("b", T.FLOAT, None)],
             {"a": np.ones((2, 3), F32), "b": np.ones((), F32)}, outputs=_float_out("y"))


@pytest.mark.parametrize("seed", [-1, 2**40])
def test_dropout_takes_any_int64_seed(seed):
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "m"], name="dr", seed=seed)
    ins = [_vi("x", T.FLOAT, [64]), _vi("r", T.FLOAT, []), _vi("t", T.BOOL, [])]
    feeds = {"x": np.ones(64, F32), "r": np.array(0.5, F32), "t": np.array(True)}
    outs = [_vi("y", T.FLOAT, None), _vi("m", T.BOOL, None)]
    y, m = _run(node, ins, feeds, outputs=outs)
    np.testing.assert_array_equal(y, np.where(m, 2.0, 0.0).astype(F32))
    y2, _ = _run(node, ins, feeds, outputs=outs)
    np.testing.assert_array_equal(y, y2)

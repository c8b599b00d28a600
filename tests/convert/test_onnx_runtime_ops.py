"""to_onnx writes onnxruntime's SimplifiedLayerNormalization, which onnxruntime registers
in ONNX's own domain but ONNX does not define, as ONNX ops: RMSNormalization from opset
23 where onnxruntime runs it, the standard ops otherwise. Each export must pass ONNX's
full check and give in onnxruntime what onnxruntime's own SimplifiedLayerNormalization
kernel gives on the original model."""

import math

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from onegraph.convert import from_onnx, to_onnx
from onegraph.errors import ConversionError

F32, F16 = TensorProto.FLOAT, TensorProto.FLOAT16
SLN = "SimplifiedLayerNormalization"


def _ort(proto, feeds):
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _sln_model(x_type=F32, scale_type=F32, opset=17, axis=-1, with_stat=False,
               shape=(2, 3, 8), stash_type=None):
    """x -> SimplifiedLayerNormalization(x, scale) -> y (and inv_std_var)."""
    rng = np.random.default_rng(11)
    np_scale = helper.tensor_dtype_to_np_dtype(scale_type)
    tail = shape[axis:]
    scale = numpy_helper.from_array(rng.uniform(0.5, 2, tail).astype(np_scale), "scale")
    attrs = {"axis": axis, "epsilon": 1e-4}
    if stash_type is not None:
        attrs["stash_type"] = stash_type
    outputs = ["y", "inv_std_var"] if with_stat else ["y"]
    node = helper.make_node(SLN, ["x", "scale"], outputs, name="rms", **attrs)
    outs = [helper.make_tensor_value_info("y", scale_type, None)]
    if with_stat:
        outs.append(helper.make_tensor_value_info("inv_std_var", F32, None))
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", x_type,
                                                                          list(shape))],
                              outs, initializer=[scale])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def _x(x_type=F32, shape=(2, 3, 8)):
    x = np.random.default_rng(12).standard_normal(shape) * 3
    return x.astype(helper.tensor_dtype_to_np_dtype(x_type))


def _assert_same(got, want, x_type, scale_type):
    assert len(got) == len(want)
    tol = 2e-3 if F16 in (x_type, scale_type) else 1e-5
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g.astype(np.float32), w.astype(np.float32), rtol=tol,
                                   atol=tol)


@pytest.mark.parametrize("x_type,scale_type,opset,axis,with_stat,spelled_as", [
    (F32, F32, 17, -1, False, "ReduceMean"),
    (F32, F32, 18, 1, False, "ReduceMean"),
    (F32, F32, 17, -1, True, "ReduceMean"),
    (F32, F32, 23, -1, False, "RMSNormalization"),
    (F32, F32, 23, 1, False, "RMSNormalization"),
    (F32, F32, 23, -1, True, "ReduceMean"),      # RMSNormalization has no inv_std_var
    (F16, F16, 23, -1, False, "RMSNormalization"),
    (F16, F16, 17, -1, False, "ReduceMean"),
    (F16, F32, 23, -1, False, "ReduceMean"),     # onnxruntime's RMSNormalization: one type
    (F32, F16, 18, -1, True, "ReduceMean"),
])
def test_written_in_onnx_ops_and_computes_as_onnxruntime(x_type, scale_type, opset, axis,
                                                         with_stat, spelled_as):
    original = _sln_model(x_type, scale_type, opset, axis, with_stat)
    feeds = {"x": _x(x_type)}
    proto = to_onnx(from_onnx(original))
    ops = {n.op_type for n in proto.graph.node}
    assert SLN not in ops and spelled_as in ops
    assert [o.version for o in proto.opset_import if o.domain == ""] == [opset]
    onnx.checker.check_model(proto, full_check=True)
    _assert_same(_ort(proto, feeds), _ort(original, feeds), x_type, scale_type)


@pytest.mark.parametrize("opset,target", [(17, 23), (23, 18), (23, 13), (18, 17)])
def test_written_at_another_target_opset(opset, target):
    original = _sln_model(opset=opset)
    feeds = {"x": _x()}
    proto = to_onnx(from_onnx(original), opset=target)
    assert [o.version for o in proto.opset_import if o.domain == ""] == [target]
    ops = {n.op_type for n in proto.graph.node}
    assert SLN not in ops and ("RMSNormalization" in ops) == (opset >= 23 and target >= 23)
    onnx.checker.check_model(proto, full_check=True)
    _assert_same(_ort(proto, feeds), _ort(original, feeds), F32, F32)


def test_in_a_subgraph_too():
    """An If branch's SimplifiedLayerNormalization reading the outer x and scale."""
    inner = _sln_model(opset=17)
    then_branch = helper.make_graph(
        list(inner.graph.node), "then", [],
        [helper.make_tensor_value_info("y", F32, None)])
    else_branch = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y_else"])], "else", [],
        [helper.make_tensor_value_info("y_else", F32, None)])
    node = helper.make_node("If", ["cond"], ["out"], then_branch=then_branch,
                            else_branch=else_branch, name="if")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                      helper.make_tensor_value_info("x", F32, [2, 3, 8])],
        [helper.make_tensor_value_info("out", F32, [2, 3, 8])],
        initializer=list(inner.graph.initializer))
    original = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    original.ir_version = 10
    proto = to_onnx(from_onnx(original))
    then_ops = {n.op_type for n in proto.graph.node[0].attribute[0].g.node} | \
        {n.op_type for n in proto.graph.node[0].attribute[1].g.node}
    assert SLN not in then_ops and "ReduceMean" in then_ops
    onnx.checker.check_model(proto, full_check=True)
    for cond in (True, False):
        feeds = {"cond": np.array(cond), "x": _x()}
        _assert_same(_ort(proto, feeds), _ort(original, feeds), F32, F32)


def test_check_false_writes_it_as_it_came():
    original = _sln_model(opset=23)
    proto = to_onnx(from_onnx(original), check=False)
    nodes = [n for n in proto.graph.node if n.op_type == SLN]
    assert len(nodes) == 1 and nodes[0].domain == ""
    feeds = {"x": _x()}
    _assert_same(_ort(proto, feeds), _ort(original, feeds), F32, F32)


def test_stash_type_double_computes_in_double():
    original = _sln_model(opset=23, stash_type=11)
    proto = to_onnx(from_onnx(original))
    ops = [n.op_type for n in proto.graph.node]
    assert SLN not in ops and "RMSNormalization" not in ops
    casts = [helper.get_attribute_value(a) for n in proto.graph.node if n.op_type == "Cast"
             for a in n.attribute]
    assert TensorProto.DOUBLE in casts and TensorProto.FLOAT in casts
    onnx.checker.check_model(proto, full_check=True)
    x = _x()
    (got,) = _ort(proto, {"x": x})
    scale = numpy_helper.to_array(original.graph.initializer[0]).astype(np.float64)
    xd = x.astype(np.float64)
    want = xd / np.sqrt(np.mean(xd * xd, axis=-1, keepdims=True) + 1e-4) * scale
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-6, atol=1e-6)


def test_unknown_rank_is_refused_naming_the_node():
    original = _sln_model(opset=17)
    original.graph.input[0].type.tensor_type.ClearField("shape")
    with pytest.raises(ConversionError, match=r"cannot write SimplifiedLayerNormalization "
                                              r"node 'rms' in ONNX's ops: the rank of its "
                                              r"input is unknown"):
        to_onnx(from_onnx(original))
    # the model itself is fine: written as it came without the check
    assert SLN in {n.op_type for n in to_onnx(from_onnx(original), check=False).graph.node}


def test_newer_ops_beside_it_are_spelled_too_and_others_still_refused():
    """Gelu came in at opset 20 (onegraph runs it at any opset): beside the runtime op
    it is written in opset-17 ops too (to_onnx spells ops newer than the model's opset
    where a spelling exists); DeformConv (opset 19) has none and is still refused."""
    original = _sln_model(opset=17)
    original.graph.node.append(helper.make_node("Gelu", ["y"], ["z"], name="gelu"))
    original.graph.output.append(helper.make_tensor_value_info("z", F32, [2, 3, 8]))
    exported = to_onnx(from_onnx(original))
    assert not {"Gelu", SLN} & {n.op_type for n in exported.graph.node}
    onnx.checker.check_model(exported, full_check=True)
    x = np.random.default_rng(5).standard_normal((2, 3, 8)).astype(np.float32)
    y = _ort(exported, {"x": x})
    z = y[1].astype(np.float64)
    want = 0.5 * y[0] * (1 + np.vectorize(math.erf)(y[0].astype(np.float64) / math.sqrt(2)))
    np.testing.assert_allclose(z, want, rtol=1e-5, atol=1e-6)
    original.graph.node[-1].CopyFrom(helper.make_node("DeformConv", ["y", "w", "o"], ["z"],
                                                      name="deform"))
    original.graph.initializer.extend([
        numpy_helper.from_array(np.ones((3, 2, 1, 1), np.float32), "w"),
        numpy_helper.from_array(np.zeros((3, 2, 1, 8), np.float32), "o")])
    with pytest.raises(ConversionError, match=r"ops that ONNX does not define "
                                              r"\(default-domain opset 17\): DeformConv x1 "
                                              r"\(first: node 'deform'\)$"):
        to_onnx(from_onnx(original))


def test_bfloat16_below_opset_23_is_refused_naming_the_type():
    """The standard-op spelling computes in float16, float or double only; at opset 23
    the same node is RMSNormalization, which takes bfloat16."""
    original = _sln_model(TensorProto.BFLOAT16, TensorProto.BFLOAT16, opset=17)
    with pytest.raises(ConversionError, match=r"cannot write SimplifiedLayerNormalization "
                                              r"node 'rms' in ONNX's ops: its input X's "
                                              r"type is bfloat16"):
        to_onnx(from_onnx(original))
    at_23 = to_onnx(from_onnx(_sln_model(TensorProto.BFLOAT16, TensorProto.BFLOAT16,
                                         opset=23)))
    assert [n.op_type for n in at_23.graph.node] == ["RMSNormalization"]
    onnx.checker.check_model(at_23, full_check=True)

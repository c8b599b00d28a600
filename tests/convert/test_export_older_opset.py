"""Exporting to an older opset than the model's (`to_onnx(model, opset=...)`).

onnx's version converter alone cannot take Add or Relu from opset 14 to 13, nor write
Gelu or LayerNormalization before they existed: onegraph holds back the nodes whose
op changed only in ways they do not use, and rewrites the newer ops into older ones.
Every result is checked by onnxruntime against the original model in onnxruntime."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onegraph as og
from onegraph.convert import from_onnx, to_onnx
from onegraph.errors import ConversionError

from .model_zoo import transformer_encoder


def _ort(proto, feeds):
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _default_opset(proto):
    return [o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")]


def _single(op, inputs, attrs=None, opset=21, x_shape=(2, 3, 4), extra_inits=(),
            dtype=TensorProto.FLOAT, outputs=("y",)):
    """A one-node model: input x, the node, outputs named in `outputs`."""
    x = helper.make_tensor_value_info("x", dtype, list(x_shape))
    ys = [helper.make_tensor_value_info(name, dtype, None) for name in outputs]
    node = helper.make_node(op, inputs, list(outputs), name=f"the_{op.lower()}",
                            **(attrs or {}))
    graph = helper.make_graph([node], "g", [x], ys, initializer=list(extra_inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("target", [13, 14, 16, 17, 19])
def test_transformer_encoder_goes_down_to_older_opsets(target):
    """Gelu (opset 20) and LayerNormalization (17) become older ops; the result
    matches the opset-20 original in onnxruntime."""
    original = transformer_encoder(layers=1, d_model=32, heads=2, ffn=64, seq=8)
    x = np.random.default_rng(0).standard_normal((1, 8, 32)).astype(np.float32)
    want = _ort(original, {"x": x})
    proto = to_onnx(from_onnx(original), opset=target)
    assert _default_opset(proto) == [target]
    ops = {n.op_type for n in proto.graph.node}
    assert "Gelu" not in ops
    assert ("LayerNormalization" in ops) == (target >= 17)
    assert {n.domain for n in proto.graph.node} == {""}
    onnx.checker.check_model(proto, full_check=True)
    np.testing.assert_allclose(_ort(proto, {"x": x})[0], want[0], rtol=1e-4, atol=1e-5)


def test_api_built_model_exports_to_opset_13():
    """A model built with the API records opset 21; its Add and Relu changed at 14
    only in types, so it goes to 13."""
    g = og.Graph()
    with g.as_default():
        og.set_random_seed(3)
        x = og.placeholder(og.float32, [None, 5], name="x")
        y = og.nn.dense(og.nn.dense(x, 7, activation=og.nn.relu), 2)
    sess = og.Session(g, seed=0)
    xb = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    want = sess.run(y, {x: xb})
    model = g.to_model(session=sess,
                       signatures={"serving": og.signature({"x": x}, {"y": y})})
    proto = to_onnx(model, opset=13)
    assert _default_opset(proto) == [13]
    np.testing.assert_allclose(_ort(proto, {"x": xb})[0], want, rtol=1e-5, atol=1e-6)


# (onnxruntime has no double Erf, so the exact form is checked in float only)
@pytest.mark.parametrize("approximate,dtype", [("none", TensorProto.FLOAT),
                                               ("tanh", TensorProto.FLOAT),
                                               ("tanh", TensorProto.DOUBLE)])
def test_gelu_rewritten_for_older_opsets(approximate, dtype):
    original = _single("Gelu", ["x"], {"approximate": approximate}, opset=20, dtype=dtype)
    x = (np.random.default_rng(2).standard_normal((2, 3, 4)) * 3).astype(
        helper.tensor_dtype_to_np_dtype(dtype))
    proto = to_onnx(from_onnx(original), opset=18)
    assert [n.op_type for n in proto.graph.node].count("Gelu") == 0
    np.testing.assert_allclose(_ort(proto, {"x": x})[0], _ort(original, {"x": x})[0],
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("axis", [-1, 1])
@pytest.mark.parametrize("target", [13, 16])
def test_layer_norm_rewritten_with_every_output(axis, target):
    rng = np.random.default_rng(4)
    shape = (2, 3, 4)
    tail = shape[axis:] if axis >= 0 else shape[axis:]
    scale = numpy_helper.from_array(rng.standard_normal(tail).astype(np.float32), "scale")
    bias = numpy_helper.from_array(rng.standard_normal(tail).astype(np.float32), "bias")
    original = _single("LayerNormalization", ["x", "scale", "bias"],
                       {"axis": axis, "epsilon": 1e-3}, opset=17,
                       extra_inits=[scale, bias], outputs=("y", "mean", "inv_std"))
    x = rng.standard_normal(shape).astype(np.float32)
    proto = to_onnx(from_onnx(original), opset=target)
    assert "LayerNormalization" not in {n.op_type for n in proto.graph.node}
    got, want = _ort(proto, {"x": x}), _ort(original, {"x": x})
    assert len(got) == len(want) == 3  # y, mean and inv_std all survive the rewrite
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op,opset", [("Mish", 18), ("HardSwish", 14)])
def test_newer_activations_rewritten(op, opset):
    original = _single(op, ["x"], opset=opset)
    x = (np.random.default_rng(5).standard_normal((2, 3, 4)) * 4).astype(np.float32)
    proto = to_onnx(from_onnx(original), opset=13)
    assert op not in {n.op_type for n in proto.graph.node}
    np.testing.assert_allclose(_ort(proto, {"x": x})[0], _ort(original, {"x": x})[0],
                               rtol=1e-5, atol=1e-6)


def test_new_attribute_at_its_default_is_dropped():
    """Reshape's allowzero (opset 14) set to its default 0 means what opset 13 does."""
    shape = numpy_helper.from_array(np.array([4, 6], np.int64), "shape")
    original = _single("Reshape", ["x", "shape"], {"allowzero": 0}, opset=14,
                       extra_inits=[shape])
    proto = to_onnx(from_onnx(original), opset=13)
    (node,) = proto.graph.node
    assert [a.name for a in node.attribute] == []
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(_ort(proto, {"x": x})[0], x.reshape(4, 6))


def test_nodes_in_subgraphs_go_down_too():
    """An If whose branches hold an Add (changed at 14) and a Gelu (new at 20)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
    c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
    then_g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["t"], name="add")],
                               "then", [], [helper.make_tensor_value_info(
                                   "t", TensorProto.FLOAT, [3])])
    else_g = helper.make_graph([helper.make_node("Gelu", ["x"], ["e"], name="gelu")],
                               "else", [], [helper.make_tensor_value_info(
                                   "e", TensorProto.FLOAT, [3])])
    node = helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)
    original = helper.make_model(helper.make_graph([node], "g", [x, c], [y]),
                                 opset_imports=[helper.make_opsetid("", 20)])
    proto = to_onnx(from_onnx(original), opset=13)
    onnx.checker.check_model(proto, full_check=True)
    xv = np.array([-1.5, 0.25, 2.0], np.float32)
    for cond in (True, False):
        feeds = {"x": xv, "c": np.array(cond)}
        np.testing.assert_allclose(_ort(proto, feeds)[0], _ort(original, feeds)[0],
                                   rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("check", [True, False])
def test_types_the_older_opset_lacks_are_refused(check):
    """int8 Add came in at opset 14: refused at 13 naming the node, also without the
    checker (before, check=False wrote a model onnxruntime refuses)."""
    original = _single("Add", ["x", "x"], opset=14, dtype=TensorProto.INT8)
    with pytest.raises(ConversionError, match=r"cannot write Add \(node 'the_add'\) at "
                                              r"opset 13: its input 0 \('x'\) is int8, "
                                              r"which Add accepts from opset 14"):
        to_onnx(from_onnx(original), opset=13, check=check)


def test_below_opset_8_the_message_gives_the_opset_the_op_changed_at():
    """Relu has versions 6, 13, 14: onnx's converter names its missing adapter's target
    (13), not where Relu changed (14); below 8 nodes are not kept as they are."""
    original = _single("Relu", ["x"], opset=14)
    with pytest.raises(ConversionError, match=r"cannot write Relu \(node 'the_relu'\) at "
                                              r"opset 7: it changed at opset 14 and onnx's "
                                              r"version converter has no adapter"):
        to_onnx(from_onnx(original), opset=7)


def test_op_newer_than_the_target_without_a_rewrite_is_named():
    original = _single("BitwiseNot", ["x"], opset=18, dtype=TensorProto.INT32)
    with pytest.raises(ConversionError, match=r"cannot write BitwiseNot \(node "
                                              r"'the_bitwisenot'\) at opset 17: the op "
                                              r"came in at opset 18"):
        to_onnx(from_onnx(original), opset=17)


def test_attribute_value_the_older_opset_lacks_is_refused():
    """Pad's mode 'wrap' came in at opset 19."""
    pads = numpy_helper.from_array(np.array([0, 0, 1, 0, 0, 1], np.int64), "pads")
    original = _single("Pad", ["x", "pads"], {"mode": "wrap"}, opset=19,
                       extra_inits=[pads])
    with pytest.raises(ConversionError, match="Pad"):
        to_onnx(from_onnx(original), opset=18)


def _roi_align(opset, **attrs):
    """x [1, 1, 4, 4] -> RoiAlign over one box [0, 0, 3, 3] -> y [1, 1, 2, 2]."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])
    rois = numpy_helper.from_array(np.array([[0, 0, 3, 3]], np.float32), "rois")
    idx = numpy_helper.from_array(np.array([0], np.int64), "idx")
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    node = helper.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], output_height=2,
                            output_width=2, name="roi", **attrs)
    return helper.make_model(helper.make_graph([node], "g", [x], [y], [rois, idx]),
                             opset_imports=[helper.make_opsetid("", opset)])


def test_half_pixel_roi_align_is_refused_below_16():
    """RoiAlign's coordinate_transformation_mode (opset 16) defaults to half_pixel,
    which opset 10's RoiAlign cannot do: never written as one that computes something
    else."""
    for attrs in ({"coordinate_transformation_mode": "half_pixel"}, {}):
        with pytest.raises(ConversionError, match=r"cannot write RoiAlign node 'roi' at "
                                                  r"opset 15 .*'half_pixel' came in at "
                                                  r"opset 16"):
            to_onnx(from_onnx(_roi_align(16, **attrs)), opset=15)


@pytest.mark.parametrize("source,target", [(16, 15), (16, 13), (11, 13), (11, 16),
                                           (13, None), (15, 21)])
def test_roi_align_keeps_its_sampling_across_opset_16(source, target):
    """Before opset 16 RoiAlign samples as 16's output_half_pixel does: imported, run
    and written at any opset, it computes what onnxruntime computes for the original."""
    attrs = {"coordinate_transformation_mode": "output_half_pixel"} if source >= 16 else {}
    original = _roi_align(source, **attrs)
    xv = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    want = _ort(original, {"x": xv})[0]
    model = from_onnx(original)
    np.testing.assert_allclose(og.Session(model).run(["y"], {"x": xv})[0], want, rtol=1e-6)
    proto = to_onnx(model, opset=target)
    onnx.checker.check_model(proto, full_check=True)
    np.testing.assert_allclose(_ort(proto, {"x": xv})[0], want, rtol=1e-6)


@pytest.mark.parametrize("op, attrs, since, x_shape", [
    ("AveragePool", {"kernel_shape": [2, 2], "dilations": [2, 2]}, 19, (1, 2, 6, 6)),
    ("Resize", {"antialias": 1, "mode": "linear"}, 18, (1, 1, 4, 4)),
])
def test_attribute_newer_than_the_target_is_refused_by_name(op, attrs, since, x_shape):
    """onnx's converter copied AveragePool's dilations (opset 19) into an opset-17
    model its own checker then refused; the exporter names the attribute instead."""
    inputs = ["x"]
    inits = []
    if op == "Resize":
        inputs = ["x", "", "scales"]
        inits = [numpy_helper.from_array(np.array([1, 1, 0.5, 0.5], np.float32), "scales")]
    proto = _single(op, inputs, attrs, opset=since, x_shape=x_shape, extra_inits=inits)
    model = from_onnx(proto)
    attr = next(a for a in attrs if a not in ("kernel_shape", "mode"))
    with pytest.raises(ConversionError,
                       match=rf"cannot write {op} node 'the_{op.lower()}' at opset 13: its "
                             rf"attribute '{attr}' came in at opset {since}; export at "
                             rf"opset {since} or later"):
        to_onnx(model, opset=13)
    # at the attribute's own opset it exports, and runs as the original does
    x = np.random.default_rng(5).standard_normal(x_shape).astype(np.float32)
    np.testing.assert_allclose(_ort(to_onnx(model, opset=since), {"x": x})[0],
                               _ort(proto, {"x": x})[0], rtol=1e-6)


@pytest.mark.parametrize("op", ["ReduceMean", "ReduceMax", "ReduceL2"])
def test_default_valued_new_attribute_is_dropped_going_down(op):
    """noop_with_empty_axes=0 written out (its default) came in at 18 for these: onnx's
    adapter copied it into an opset-17 model its checker refused."""
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    original = _single(op, ["x", "axes"], {"keepdims": 1, "noop_with_empty_axes": 0},
                       opset=18, extra_inits=[axes])
    proto = to_onnx(from_onnx(original), opset=17)
    x = np.random.default_rng(6).standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(_ort(proto, {"x": x})[0], _ort(original, {"x": x})[0],
                               rtol=1e-6)


@pytest.mark.parametrize("dtype", [TensorProto.FLOAT, TensorProto.FLOAT16])
@pytest.mark.parametrize("axis", [-1, 1])
@pytest.mark.parametrize("target", [13, 17, 18, 22])
def test_rms_norm_rewritten_for_older_opsets(dtype, axis, target):
    """RMSNormalization (opset 23) becomes Mul, ReduceMean, Sqrt, ... in float."""
    rng = np.random.default_rng(6)
    shape = (2, 3, 4)
    np_type = helper.tensor_dtype_to_np_dtype(dtype)
    scale = numpy_helper.from_array(rng.standard_normal(shape[axis:]).astype(np_type),
                                    "scale")
    original = _single("RMSNormalization", ["x", "scale"], {"axis": axis, "epsilon": 1e-3},
                       opset=23, dtype=dtype, extra_inits=[scale])
    x = (rng.standard_normal(shape) * 3).astype(np_type)
    proto = to_onnx(from_onnx(original), opset=target)
    assert _default_opset(proto) == [target]
    assert "RMSNormalization" not in {n.op_type for n in proto.graph.node}
    onnx.checker.check_model(proto, full_check=True)
    got, want = _ort(proto, {"x": x})[0], _ort(original, {"x": x})[0]
    assert got.dtype == want.dtype == np_type
    tol = 1e-3 if dtype == TensorProto.FLOAT16 else 1e-6
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_rms_norm_of_unknown_rank_is_refused_by_name():
    scale = numpy_helper.from_array(np.ones(4, np.float32), "scale")
    original = _single("RMSNormalization", ["x", "scale"], opset=23, extra_inits=[scale])
    original.graph.input[0].type.tensor_type.ClearField("shape")
    with pytest.raises(ConversionError, match=r"cannot write RMSNormalization node "
                                              r"'the_rmsnormalization' at opset 18 .*"
                                              r"rank of its input is unknown"):
        to_onnx(from_onnx(original), opset=18)


def test_ops_onnx_defines_as_functions_are_written_as_their_bodies():
    """Swish (opset 24) below 24: onnx's inliner writes its function body (and its
    CastLike, from opset 15, once more below 15)."""
    original = _single("Swish", ["x"], {"alpha": 0.75}, opset=24)
    x = (np.random.default_rng(7).standard_normal((2, 3, 4)) * 4).astype(np.float32)
    want = x / (1 + np.exp(-0.75 * x))   # onnxruntime 1.32 has no Swish kernel
    for target in (22, 13):
        proto = to_onnx(from_onnx(original), opset=target)
        ops = {n.op_type for n in proto.graph.node}
        assert "Swish" not in ops and (target >= 15 or "CastLike" not in ops)
        onnx.checker.check_model(proto, full_check=True)
        np.testing.assert_allclose(_ort(proto, {"x": x})[0], want, rtol=1e-5, atol=1e-6)


def test_a_function_op_the_inliner_cannot_expand_is_refused_with_its_reason():
    """CausalConvWithState with its optional bias omitted before past_state."""
    weight = numpy_helper.from_array(np.ones((3, 1, 2), np.float32), "weight")
    past = helper.make_tensor_value_info("past", TensorProto.FLOAT, [1, 3, 1])
    original = _single("CausalConvWithState", ["x", "weight", "", "past"],
                       opset=27, x_shape=(1, 3, 5), extra_inits=[weight],
                       outputs=("y", "present"))
    original.graph.input.append(past)
    with pytest.raises(ConversionError, match=r"cannot write CausalConvWithState .* at "
                                              r"opset 22: the op came in at opset 27.*"
                                              r"onnx's inliner could not expand its "
                                              r"function: it needs the type of an omitted "
                                              r"optional input"):
        to_onnx(from_onnx(original), opset=22)


def test_function_op_reading_initializers_is_written_as_its_body():
    """RotaryEmbedding (opset 23) with its cos/sin caches as initializers: the
    inliner types the function's inputs from them too."""
    rng = np.random.default_rng(8)
    cos = numpy_helper.from_array(rng.uniform(-1, 1, (6, 2)).astype(np.float32), "cos")
    sin = numpy_helper.from_array(rng.uniform(-1, 1, (6, 2)).astype(np.float32), "sin")
    pos = numpy_helper.from_array(np.array([[0, 2, 5], [1, 3, 4]], np.int64), "pos")
    original = _single("RotaryEmbedding", ["x", "cos", "sin", "pos"], {"num_heads": 2},
                       opset=23, x_shape=(2, 3, 8), extra_inits=[cos, sin, pos])
    x = rng.standard_normal((2, 3, 8)).astype(np.float32)
    proto = to_onnx(from_onnx(original), opset=22)
    assert "RotaryEmbedding" not in {n.op_type for n in proto.graph.node}
    assert {vi.name for vi in proto.graph.value_info}.isdisjoint({"cos", "sin", "pos"})
    onnx.checker.check_model(proto, full_check=True)
    np.testing.assert_allclose(_ort(proto, {"x": x})[0], _ort(original, {"x": x})[0],
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("attrs", [{"start": 1}, {"end": -1}, {"start": -2, "end": 3},
                                   {"start": 5}, {"start": 0, "end": 0}])
def test_shape_start_and_end_become_a_slice_below_opset_15(attrs):
    original = _single("Shape", ["x"], attrs, opset=15, x_shape=(2, 3, 4))
    original.graph.output[0].type.tensor_type.elem_type = TensorProto.INT64
    x = np.zeros((2, 3, 4), np.float32)
    for target in (13, 14):
        proto = to_onnx(from_onnx(original), opset=target)
        assert "Slice" in {n.op_type for n in proto.graph.node}
        onnx.checker.check_model(proto, full_check=True)
        np.testing.assert_array_equal(_ort(proto, {"x": x})[0], _ort(original, {"x": x})[0])


def _pad_model(axes, mode="constant", pads=(1, 2, 0, 3), axes_as_input=False):
    """Pad-18 of a (2, 3, 4) x with `pads` on `axes`, constant value 0.5."""
    inits = [numpy_helper.from_array(np.array(pads, np.int64), "pads"),
             numpy_helper.from_array(np.array(0.5, np.float32), "value")]
    if not axes_as_input:
        inits.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
    model = _single("Pad", ["x", "pads", "value", "axes"], {"mode": mode}, opset=18,
                    extra_inits=inits)
    if axes_as_input:
        model.graph.input.append(helper.make_tensor_value_info("axes", TensorProto.INT64,
                                                               [len(axes)]))
    return model


@pytest.mark.parametrize("axes,mode", [([0, 2], "constant"), ([-1, 1], "reflect"),
                                       ([2, 0], "edge")])
def test_pad_axes_are_spelled_out_below_opset_18(axes, mode):
    original = _pad_model(axes, mode, pads=(1, 1, 1, 1) if mode == "reflect" else
                          (1, 2, 0, 3))
    x = np.random.default_rng(9).standard_normal((2, 3, 4)).astype(np.float32)
    for target in (13, 17):
        proto = to_onnx(from_onnx(original), opset=target)
        assert _default_opset(proto) == [target]
        onnx.checker.check_model(proto, full_check=True)
        np.testing.assert_array_equal(_ort(proto, {"x": x})[0], _ort(original, {"x": x})[0])


def test_pad_axes_fed_at_run_time_are_refused_with_the_reason():
    original = _pad_model([0, 2], axes_as_input=True)
    with pytest.raises(ConversionError, match=r"cannot write Pad node 'the_pad' at opset 17 "
                                              r"\(it changed at opset 18 in a way the node "
                                              r"uses\): its axes are not a constant"):
        to_onnx(from_onnx(original), opset=17)


@pytest.mark.parametrize("op", ["ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                                "ReduceSumSquare"])
@pytest.mark.parametrize("axes,attrs", [([0, 2], {"keepdims": 0}), ([-1], {}),
                                        ([], {"noop_with_empty_axes": 1}), ([], {})])
def test_constant_reduction_axes_become_the_attribute_below_opset_18(op, axes, attrs):
    """(With no axes and noop_with_empty_axes the elementwise part still applies:
    ReduceL2 gives sqrt(x * x), which overflows for 1e20, ReduceLogSum log(x).)"""
    inits = [numpy_helper.from_array(np.array(axes, np.int64), "axes")]
    original = _single(op, ["x", "axes"], attrs, opset=18, extra_inits=inits)
    x = np.random.default_rng(10).standard_normal((2, 3, 4)).astype(np.float32)
    x[0, 0, :2] = [1e20, -1e20]
    for target in (13, 17):
        proto = to_onnx(from_onnx(original), opset=target)
        onnx.checker.check_model(proto, full_check=True)
        np.testing.assert_allclose(_ort(proto, {"x": x})[0], _ort(original, {"x": x})[0],
                                   rtol=1e-6, atol=1e-6, equal_nan=True)


def test_reduction_axes_fed_at_run_time_are_refused_with_the_reason():
    original = _single("ReduceMax", ["x", "axes"], opset=18)
    original.graph.input.append(helper.make_tensor_value_info("axes", TensorProto.INT64,
                                                              [1]))
    with pytest.raises(ConversionError, match=r"cannot write ReduceMax node 'the_reducemax' "
                                              r"at opset 17 \(it changed at opset 18 in a "
                                              r"way the node uses\): its axes are computed "
                                              r"at run time"):
        to_onnx(from_onnx(original), opset=17)


@pytest.mark.parametrize("n,length", [(2, 6), (3, 7), (4, 10)])
def test_split_of_a_run_time_length_computes_its_sizes_below_opset_18(n, length):
    """num_outputs (opset 18) on an axis of unknown length: the sizes come from the
    input's shape at run time (ceil(length / n) each, the rest last)."""
    outputs = tuple(f"y{k}" for k in range(n))
    original = _single("Split", ["x"], {"axis": 1, "num_outputs": n}, opset=18,
                       x_shape=(2, "L"), outputs=outputs)
    x = np.arange(2 * length, dtype=np.float32).reshape(2, length)
    for target in (13, 17):
        proto = to_onnx(from_onnx(original), opset=target)
        onnx.checker.check_model(proto, full_check=True)
        got, want = _ort(proto, {"x": x}), _ort(original, {"x": x})
        assert [g.shape for g in got] == [w.shape for w in want]
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", [TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL])
@pytest.mark.parametrize("upper,k", [(1, None), (0, None), (1, 2), (0, -1), (1, -5)])
def test_trilu_becomes_a_where_below_opset_14(dtype, upper, k):
    inputs = ["x"] + (["k"] if k is not None else [])
    inits = [numpy_helper.from_array(np.array(k, np.int64), "k")] if k is not None else []
    original = _single("Trilu", inputs, {"upper": upper}, opset=14, x_shape=(2, 3, 5),
                       dtype=dtype, extra_inits=inits)
    x = np.random.default_rng(11).standard_normal((2, 3, 5)) * 5
    x = x.astype(helper.tensor_dtype_to_np_dtype(dtype))
    if dtype == TensorProto.FLOAT:
        x[0, 1, 1] = np.nan
    proto = to_onnx(from_onnx(original), opset=13)
    assert "Trilu" not in {n.op_type for n in proto.graph.node}
    onnx.checker.check_model(proto, full_check=True)
    np.testing.assert_array_equal(_ort(proto, {"x": x})[0], _ort(original, {"x": x})[0])


def test_allowzero_with_a_constant_shape_without_zeros_goes_below_14():
    """The dynamo exporter writes allowzero=1 on every view: with a constant shape that
    holds no 0 it means what opset 13's Reshape means."""
    shape = numpy_helper.from_array(np.array([4, -1], np.int64), "shape")
    original = _single("Reshape", ["x", "shape"], {"allowzero": 1}, opset=14,
                       extra_inits=[shape])
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    proto = to_onnx(from_onnx(original), opset=13)
    assert [a.name for n in proto.graph.node for a in n.attribute] == []
    onnx.checker.check_model(proto, full_check=True)
    np.testing.assert_array_equal(_ort(proto, {"x": x})[0], _ort(original, {"x": x})[0])


@pytest.mark.parametrize("zero_in_shape", [True, False])
def test_allowzero_that_may_matter_is_refused_below_14(zero_in_shape):
    """A 0 in the shape (allowzero=1 keeps it, 13 would copy the input's dim), or a
    shape computed at run time."""
    original = _single("Reshape", ["x", "shape"], {"allowzero": 1}, opset=14,
                       extra_inits=[numpy_helper.from_array(np.array([0, 4], np.int64),
                                                            "shape")]
                       if zero_in_shape else [])
    if not zero_in_shape:
        original.graph.input.append(helper.make_tensor_value_info("shape",
                                                                  TensorProto.INT64, [2]))
    with pytest.raises(ConversionError, match=r"cannot write Reshape node 'the_reshape' at "
                                              r"opset 13: its attribute 'allowzero' came in "
                                              r"at opset 14"):
        to_onnx(from_onnx(original), opset=13)


def test_inference_batch_norm_goes_from_15_to_13():
    """BatchNormalization-14 renamed its statistics inputs; an inference node with
    training_mode=0 written out (as torch writes it) means what opset 13's does."""
    rng = np.random.default_rng(12)
    params = [numpy_helper.from_array(v.astype(np.float32), name) for name, v in (
        ("scale", rng.uniform(0.5, 2, 3)), ("bias", rng.standard_normal(3)),
        ("mean", rng.standard_normal(3)), ("var", rng.uniform(0.5, 2, 3)))]
    original = _single("BatchNormalization", ["x", "scale", "bias", "mean", "var"],
                       {"training_mode": 0, "momentum": 0.9}, opset=15, x_shape=(2, 3, 4),
                       extra_inits=params)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    proto = to_onnx(from_onnx(original), opset=13)
    onnx.checker.check_model(proto, full_check=True)
    np.testing.assert_allclose(_ort(proto, {"x": x})[0], _ort(original, {"x": x})[0],
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_takes_its_opset_16_mode_names_below_20(mode, align):
    rng = np.random.default_rng(13)
    grid = numpy_helper.from_array(rng.uniform(-1.1, 1.1, (1, 3, 4, 2)).astype(np.float32),
                                   "grid")
    original = _single("GridSample", ["x", "grid"], {"mode": mode, "align_corners": align,
                                                     "padding_mode": "border"},
                       opset=20, x_shape=(1, 2, 5, 6), extra_inits=[grid])
    x = rng.standard_normal((1, 2, 5, 6)).astype(np.float32)
    for target in (16, 19):
        proto = to_onnx(from_onnx(original), opset=target)
        onnx.checker.check_model(proto, full_check=True)
        np.testing.assert_allclose(_ort(proto, {"x": x})[0], _ort(original, {"x": x})[0],
                                   rtol=1e-5, atol=1e-6)
    with pytest.raises(ConversionError, match=r"cannot write GridSample .* at opset 15: the "
                                              r"op came in at opset 16"):
        to_onnx(from_onnx(original), opset=15)


def test_trilu_goes_below_opset_13_too():
    """Below 13 Squeeze and Unsqueeze take their axes as an attribute."""
    original = _single("Trilu", ["x"], {"upper": 0}, opset=14, x_shape=(3, 4))
    x = np.random.default_rng(14).standard_normal((3, 4)).astype(np.float32)
    proto = to_onnx(from_onnx(original), opset=12)
    onnx.checker.check_model(proto, full_check=True)
    np.testing.assert_array_equal(_ort(proto, {"x": x})[0], np.tril(x))


@pytest.mark.parametrize("op, since, model_opset, attrs", [
    ("HardSwish", 14, 13, {}),     # tf2onnx 1.17 writes it into opset-13 models
    ("Gelu", 20, 17, {"approximate": "tanh"}),
    ("Mish", 18, 13, {}),
    ("Swish", 24, 18, {"alpha": 0.5}),  # a function op: its body
])
def test_newer_op_in_an_older_model_is_spelled_in_the_models_opset(op, since, model_opset,
                                                                  attrs):
    """A model stating opset N with an op ONNX defines only later (onnx's checker and
    onnxruntime refuse it; onegraph runs it) exports at opset N with the op spelled in
    opset-N ops, matching onnxruntime on the same op in a model of its own opset. It
    was refused as an op ONNX does not define at N."""
    if onnx.defs.onnx_opset_version() < since:
        pytest.skip(f"onnx {onnx.__version__} has no opset {since}")
    x = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32) * 3
    old = from_onnx(_single(op, ["x"], attrs, opset=model_opset))
    want = _ort(_single(op, ["x"], attrs, opset=since), {"x": x})[0]
    for target in (None, model_opset):
        proto = to_onnx(old) if target is None else to_onnx(old, opset=target)
        assert _default_opset(proto) == [model_opset]
        assert op not in {n.op_type for n in proto.graph.node}
        onnx.checker.check_model(proto, full_check=True)
        np.testing.assert_allclose(_ort(proto, {"x": x})[0], want, rtol=1e-5, atol=1e-6)


def test_newer_op_without_a_spelling_in_the_models_opset_is_still_refused():
    """DeformConv (opset 19) has no older form: refused by name, as before."""
    old = _single("DeformConv", ["x", "w", "offset"], opset=13, x_shape=(1, 1, 3, 3),
                  extra_inits=[numpy_helper.from_array(np.ones((1, 1, 2, 2), np.float32), "w"),
                               numpy_helper.from_array(np.zeros((1, 8, 2, 2), np.float32),
                                                       "offset")])
    with pytest.raises(ConversionError, match=r"ops that ONNX does not define "
                                              r"\(default-domain opset 13\): DeformConv x1"):
        to_onnx(from_onnx(old))

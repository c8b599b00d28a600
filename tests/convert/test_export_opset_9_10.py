"""Exporting to opsets 9 and 10 (and 8), which older runtimes and embedded toolchains
pin (`to_onnx(model, opset=9)`).

From opset 8 on the exporter holds back the nodes whose op changed since the target
only in ways they do not use, as it does from 11 (Relu-13 and Conv are Relu-6 and
Conv-1 there). What such a node cannot show is the one change of opset 11 that
matters: before it, axes count from the front only. A negative axis (Concat's,
Softmax's, Unsqueeze's, the reductions', Slice's constant axes input ...) is therefore
rewritten from its input's rank, and refused by name where the rank is unknown. The
inputs that were attributes before 11 (Clip's bounds, Pad's pads and value) or 10
(Slice's starts, ends and axes) become them when constant, and Resize mapped
'asymmetric' is Resize-10 or Upsample-9.
Below 8 Sum, Max, Min and Mean did not broadcast, and holding stops.

Every exported model passes ONNX's checker (full_check) and runs in onnxruntime like
the original.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onegraph as og
from onegraph.convert import from_onnx, to_onnx
from onegraph.errors import ConversionError

from .test_export_downgrade_sweep import _check_against_stored
from .test_export_opset_11_12 import (_exported, _ort, _single, check_light_model_export,
                                      light_params)

ort = pytest.importorskip("onnxruntime")

TARGETS = (9, 10)


@pytest.mark.parametrize("name,target", light_params(TARGETS))
def test_light_model_exports_at_opset(name, target):
    """The light models with random weights export at 9 and 10 and give onnxruntime's
    outputs of the original."""
    check_light_model_export(name, target)


def _axes(value):
    return numpy_helper.from_array(np.asarray(value, np.int64), "axes")


def _attribute(proto, op, name):
    (node,) = [n for n in proto.graph.node if n.op_type == op]
    return helper.get_attribute_value(next(a for a in node.attribute if a.name == name))


# (op, attributes, axes input at opset 13 or None, attribute written at the target,
#  its value there); the input is x of shape (2, 3, 4)
NEGATIVE_AXES = [
    ("Softmax", {"axis": -1}, None, "axis", 2),
    ("LogSoftmax", {"axis": -2}, None, "axis", 2),   # an inner axis: moved last and back
    ("ArgMax", {"axis": -1}, None, "axis", 2),
    ("Flatten", {"axis": -1}, None, "axis", 2),
    ("ReduceMean", {"axes": [-1, 0]}, None, "axes", [2, 0]),
    ("ReduceSum", {}, [-2], "axes", [1]),
    ("Unsqueeze", {}, [-1], "axes", [3]),             # counted in the output's rank
    ("Squeeze", {}, None, None, None),
]


@pytest.mark.parametrize("target", [9, 10])
@pytest.mark.parametrize("op,attrs,axes,name,written", NEGATIVE_AXES,
                         ids=[c[0] for c in NEGATIVE_AXES])
def test_negative_axes_are_counted_from_the_front(op, attrs, axes, name, written, target):
    shape = (2, 3, 4)
    inits, inputs = [], ["x"]
    if op == "Squeeze":
        shape, axes, name, written = (2, 1, 4), [-2], "axes", [1]
    if axes is not None:
        inits, inputs = [_axes(axes)], ["x", "axes"]
    original = _single(op, attrs, shape=shape, inputs=inputs, inits=inits)
    if op == "ArgMax":
        original.graph.output[0].type.tensor_type.elem_type = TensorProto.INT64
    proto = _exported(original, target)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    if name is not None and op != "LogSoftmax":
        assert _attribute(proto, op, name) == written
    np.testing.assert_allclose(_ort(proto, {"x": x})[0], _ort(original, {"x": x})[0],
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", [9, 10])
def test_concat_of_negative_axis(target):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    node = helper.make_node("Concat", ["x", "x"], ["y"], axis=-1, name="cat")
    original = helper.make_model(helper.make_graph([node], "g", [x], [y]),
                                 opset_imports=[helper.make_opsetid("", 13)])
    proto = _exported(original, target)
    assert _attribute(proto, "Concat", "axis") == 1
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(_ort(proto, {"x": xv})[0], np.concatenate([xv, xv], 1))


def test_negative_axis_of_unknown_rank_is_refused_by_name():
    """x reshaped to a shape of run-time length has no known rank."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])
    s = helper.make_tensor_value_info("s", TensorProto.INT64, [None])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, [])
    nodes = [helper.make_node("Reshape", ["x", "s"], ["r"]),
             helper.make_node("ArgMax", ["r"], ["a"], axis=-1, name="the_argmax"),
             helper.make_node("ReduceSum", ["a"], ["y"], keepdims=0)]
    original = helper.make_model(helper.make_graph(nodes, "g", [x, s], [y]),
                                 opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(ConversionError, match=r"cannot write ArgMax node 'the_argmax' with "
                                              r"negative axes \[-1\] at an opset before 11.*"
                                              r"rank is unknown"):
        to_onnx(from_onnx(original), opset=10)
    assert _exported(original, 11) is not None   # opset 11 knows negative axes


@pytest.mark.parametrize("target", [9, 10])
def test_negative_slice_axes_of_unknown_rank_are_refused_by_name(target):
    """Slice's constant negative axes are counted from the front where the input's rank
    is known (test_slice_with_constant_bounds_goes_below_11); here it is not."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])
    s = helper.make_tensor_value_info("s", TensorProto.INT64, [None])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    inits = [numpy_helper.from_array(np.array(v, np.int64), n)
             for n, v in (("starts", [1]), ("ends", [3]), ("axes", [-1]))]
    nodes = [helper.make_node("Reshape", ["x", "s"], ["r"]),
             helper.make_node("Slice", ["r", "starts", "ends", "axes"], ["y"],
                              name="the_slice")]
    original = helper.make_model(helper.make_graph(nodes, "g", [x, s], [y], inits),
                                 opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(ConversionError, match=rf"cannot write Slice node 'the_slice' at "
                                              rf"opset {target} .*its axes \[-1\] are "
                                              r"negative.*rank is unknown"):
        to_onnx(from_onnx(original), opset=target)


@pytest.mark.parametrize("op", ["OneHot", "MaxUnpool"])
def test_ops_whose_meaning_changed_at_11_are_refused_by_name(node_cases, op):
    """OneHot-11 counts negative indices from the back, where OneHot-9 gives all
    off_value, and MaxUnpool-11 places its values another way than onnxruntime's
    MaxUnpool-9 does with an output_shape: neither is written below 11."""
    case = {"OneHot": "test_onehot_negative_indices",
            "MaxUnpool": "test_maxunpool_export_with_output_shape"}[op]
    with pytest.raises(ConversionError, match=rf"cannot write {op} \(node .*\) at opset 10: "
                                              r"it changed at opset 11"):
        to_onnx(from_onnx(node_cases[case].model), opset=10)


# One node test per op family, exported at 10 or 9 (alternating) and checked in
# onnxruntime against the case's stored outputs. A sweep of every node test above the
# target at both targets (3,644 exports) gave 1,029 that match, 2,581 refused by name
# (ops, types or attributes the target lacks, axes computed at run time, OneHot and
# MaxUnpool), 22 that onnxruntime cannot run in their original form either, and the
# Bernoulli cases, whose random draws cannot match (as in docs/onnx_coverage.md).
SAMPLE = [
    ("test_abs", 10), ("test_add_bcast", 9), ("test_argmax_negative_axis_keepdims_example", 10),
    ("test_averagepool_2d_pads", 9), ("test_batchnorm_example", 10),
    ("test_concat_3d_axis_negative_1", 9), ("test_basic_conv_with_padding", 10),
    ("test_convtranspose", 9), ("test_depthtospace_example", 10), ("test_div", 9),
    ("test_dropout_default_ratio", 10), ("test_elu", 9), ("test_erf", 10),
    ("test_flatten_negative_axis1", 9), ("test_gather_1", 10), ("test_gemm_all_attributes", 9),
    ("test_globalaveragepool", 10), ("test_hardmax_axis_0", 9),
    ("test_logsoftmax_negative_axis", 10), ("test_lrn", 9), ("test_lstm_defaults", 10),
    ("test_matmul_3d", 9), ("test_maxpool_2d_pads", 10), ("test_mean_example", 9),
    ("test_prelu_broadcast", 10), ("test_logsoftmax_negative_axis_expanded", 9),
    ("test_softmax_negative_axis_expanded_ver18", 10), ("test_relu", 9),
    ("test_reshape_negative_dim", 10), ("test_softmax_negative_axis", 9),
    ("test_hardmax_negative_axis", 10), ("test_flatten_negative_axis3", 9),
    ("test_tile", 10), ("test_transpose_default", 9),
    ("test_concat_2d_axis_negative_2", 10), ("test_where_example", 9),
]


@pytest.mark.parametrize("case_name,target", SAMPLE)
def test_node_case_sample(node_cases, case_name, target):
    _check_against_stored(node_cases, case_name, target)


def test_below_8_the_message_says_where_holding_starts():
    """Opset 7 is left to onnx's converter, which has no adapter for Relu-13: the
    refusal names the op, its node and the oldest target onegraph writes such nodes
    for."""
    with pytest.raises(ConversionError, match=r"cannot write Relu \(node 'the_relu'\) at "
                                              r"opset 7: .*only for targets from opset 8"):
        to_onnx(from_onnx(_single("Relu")), opset=7)


def test_relu_goes_to_opset_8():
    original = _single("Relu")
    proto = _exported(original, 8)
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(_ort(proto, {"x": x})[0], np.maximum(x, 0))


@pytest.mark.parametrize("op,opset,target", [("MaxPool", 13, 9), ("AveragePool", 19, 13)])
def test_pool_dilations_of_ones_go_where_the_attribute_did_not_exist(op, opset, target):
    """dilations (MaxPool's from 10, AveragePool's from 19) have no default in the schema,
    but one along each axis is what the op did before it: all-ones dilations are
    dropped (exporters write them; the corpora's MaxPools were refused at 9), others
    stay refused by name."""
    attrs = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    shape = (1, 2, 7, 7)
    original = _single(op, dict(attrs, dilations=[1, 1]), shape=shape, opset=opset)
    proto = _exported(original, target)
    (node,) = [n for n in proto.graph.node if n.op_type == op]
    assert "dilations" not in {a.name for a in node.attribute}
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(_ort(proto, {"x": x})[0], _ort(original, {"x": x})[0],
                               rtol=1e-6, atol=1e-6)
    dilated = _single(op, dict(attrs, dilations=[2, 1]), shape=shape, opset=opset)
    with pytest.raises(ConversionError, match=rf"cannot write {op} node 'the_{op.lower()}' "
                                              r"at opset \d+: its attribute 'dilations'"):
        to_onnx(from_onnx(dilated), opset=target)


# --------------------------------------------------------------------------------------
# Inputs that were attributes before opset 11 (Clip's min and max, Pad's pads and value)
# or 10 (Slice's starts, ends and axes; steps did not exist): constant ones are written
# as the attributes; computed ones, and what the older op cannot say, are refused by name
# --------------------------------------------------------------------------------------

def _consts(**values):
    """Initializers named by the keywords, of the values' own dtypes."""
    return [numpy_helper.from_array(np.asarray(v), name) for name, v in values.items()]


def _x(shape=(2, 3, 4), dtype=np.float32, seed=0):
    return {"x": np.random.default_rng(seed).standard_normal(shape).astype(dtype) * 2}


def _assert_runs_as_original(original, target, feeds):
    proto = _exported(original, target)
    np.testing.assert_array_equal(_ort(proto, feeds)[0], _ort(original, feeds)[0])
    return proto


# (inputs after x, their constant values); the bound not given is unbounded
CLIPS = [(("lo", "hi"), {"lo": np.float32(-0.5), "hi": np.float32(0.75)}),
         (("lo",), {"lo": np.float32(-0.5)}),
         (("", "hi"), {"hi": np.float32(0.75)}),
         (("lo", "hi"), {"lo": np.float32(1.0), "hi": np.float32(-1.0)})]   # min > max


@pytest.mark.parametrize("target", [9, 10])
@pytest.mark.parametrize("inputs,values", CLIPS, ids=["both", "min", "max", "crossed"])
def test_clip_with_constant_bounds_goes_below_11(inputs, values, target):
    original = _single("Clip", inputs=("x",) + inputs, inits=_consts(**values), opset=13)
    feeds = _x()
    feeds["x"][0, 0, :2] = [np.inf, -np.inf]
    proto = _assert_runs_as_original(original, target, feeds)
    (node,) = [n for n in proto.graph.node if n.op_type == "Clip"]
    assert list(node.input) == ["x"]
    assert {a.name for a in node.attribute} == {"min", "max"}


def test_clip_with_a_computed_bound_is_refused_by_name():
    nodes = [helper.make_node("ReduceMin", ["x"], ["lo"], keepdims=0, name="lowest"),
             helper.make_node("Clip", ["x", "lo"], ["y"], name="the_clip")]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    original = helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                                 opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(ConversionError, match=r"cannot write Clip node 'the_clip' at opset "
                                              r"10 .*its min is computed at run time"):
        to_onnx(from_onnx(original), opset=10)


def test_clip_of_ints_is_refused_by_name():
    """Clip took only float types before opset 12."""
    original = _single("Clip", inputs=("x", "lo"), inits=_consts(lo=np.int32(0)),
                       x_type=TensorProto.INT32)
    with pytest.raises(ConversionError, match=r"cannot write Clip node 'the_clip' at opset "
                                              r"9 .*int32"):
        to_onnx(from_onnx(original), opset=9)


# (attributes, inputs after x, their values)
PADS = [({}, ("pads",), {"pads": np.array([0, 1, 0, 0, 2, 1], np.int64)}),
        ({}, ("pads", "value"), {"pads": np.array([1, 0, 2, 1, 0, 0], np.int64),
                                 "value": np.float32(3.5)}),
        ({"mode": "reflect"}, ("pads",), {"pads": np.array([0, 1, 1, 0, 2, 3], np.int64)}),
        ({"mode": "edge"}, ("pads",), {"pads": np.array([1, 0, 0, 1, 0, 2], np.int64)}),
        ({}, ("pads",), {"pads": np.array([0, -1, 1, 0, 0, -2], np.int64)}),   # crops
        ({}, ("pads", "", "axes"), {"pads": np.array([1, 2, 3, 0], np.int64),
                                    "axes": np.array([-1, 0], np.int64)})]


@pytest.mark.parametrize("target", [9, 10])
@pytest.mark.parametrize("attrs,inputs,values", PADS,
                         ids=["zeros", "value", "reflect", "edge", "negative", "axes"])
def test_pad_with_constant_pads_goes_below_11(attrs, inputs, values, target):
    opset = 18 if "axes" in values else 13
    original = _single("Pad", attrs, inputs=("x",) + inputs, inits=_consts(**values),
                       opset=opset)
    proto = _assert_runs_as_original(original, target, _x())
    (node,) = [n for n in proto.graph.node if n.op_type == "Pad"]
    assert list(node.input) == ["x"]


def test_pad_with_computed_pads_is_refused_by_name():
    pads = helper.make_tensor_value_info("pads", TensorProto.INT64, [6])
    original = _single("Pad", inputs=("x", "pads"))
    original.graph.input.append(pads)
    with pytest.raises(ConversionError, match=r"cannot write Pad node 'the_pad' at opset 10 "
                                              r".*its pads are computed at run time"):
        to_onnx(from_onnx(original), opset=10)


def test_pad_of_ints_is_refused_by_name():
    """Pad took only float types before opset 11."""
    original = _single("Pad", inputs=("x", "pads"), x_type=TensorProto.INT64,
                       inits=_consts(pads=np.array([0, 1, 0, 0, 0, 0], np.int64)))
    with pytest.raises(ConversionError, match=r"cannot write Pad node 'the_pad' at opset 9 "
                                              r".*int64"):
        to_onnx(from_onnx(original), opset=9)


# (starts, ends, axes or None, steps or None)
SLICES = [([1], [3], None, None),
          ([1, -3], [100, -1], [2, 0], None),
          ([0], [2], [-1], None),
          ([-1], [-1000], [-2], [1]),
          ([0, 1], [2, 3], [0, 1], [1, 1])]


@pytest.mark.parametrize("index_type", [np.int64, np.int32])   # (tf2onnx writes int32)
@pytest.mark.parametrize("target", [9, 10])
@pytest.mark.parametrize("starts,ends,axes,steps", SLICES,
                         ids=["first", "two", "negative_axis", "steps_one", "all"])
def test_slice_with_constant_bounds_goes_below_11(starts, ends, axes, steps, target,
                                                  index_type):
    values = {"starts": np.array(starts, index_type), "ends": np.array(ends, index_type)}
    names = ["starts", "ends"]
    for name, v in (("axes", axes), ("steps", steps)):
        if v is not None:
            values[name] = np.array(v, index_type)
            names.append(name)
        else:
            names.append("")
    while names and not names[-1]:
        names.pop()
    original = _single("Slice", inputs=["x"] + names, inits=_consts(**values))
    proto = _assert_runs_as_original(original, target, _x())
    (node,) = [n for n in proto.graph.node if n.op_type == "Slice"]
    if target == 9:
        assert list(node.input) == ["x"]


def test_slice_steps_other_than_one_are_refused_by_name_at_9():
    original = _single("Slice", inputs=("x", "starts", "ends", "axes", "steps"),
                       inits=_consts(starts=np.array([0], np.int64),
                                     ends=np.array([4], np.int64),
                                     axes=np.array([2], np.int64),
                                     steps=np.array([2], np.int64)))
    with pytest.raises(ConversionError, match=r"cannot write Slice node 'the_slice' at "
                                              r"opset 9 .*steps \[2\]"):
        to_onnx(from_onnx(original), opset=9)
    _assert_runs_as_original(original, 10, _x())   # Slice-10 has steps


@pytest.mark.parametrize("target", [9, 10])
@pytest.mark.parametrize("attrs", [{"start": 1}, {"start": -2, "end": -1}, {"end": 2}])
def test_shape_start_and_end_go_below_11(attrs, target):
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="the_shape", **attrs),
             helper.make_node("Cast", ["s"], ["y"], to=TensorProto.FLOAT)]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    original = helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                                 opset_imports=[helper.make_opsetid("", 15)])
    _assert_runs_as_original(original, target, _x())


# (mode, scales of the last two axes, the targets it goes to)
RESIZES = [("nearest", [2.0, 3.0], (10, 9)), ("linear", [2.0, 1.5], (10, 9)),
           ("linear", [0.5, 0.75], (10,)), ("nearest", [1.0, 2.0], (10, 9)),
           ("nearest", [1.5, 2.0], (9,))]


@pytest.mark.parametrize("target", [9, 10])
@pytest.mark.parametrize("mode,scales,targets", RESIZES,
                         ids=["nearest", "linear_up", "linear_down", "nearest_one_axis",
                              "nearest_half"])
def test_asymmetric_resize_goes_below_11(mode, scales, targets, target):
    """Resize-13 mapped 'asymmetric' (nearest 'floor') with constant scales is Resize-10
    at 10 and Upsample-9 at 9, as onnxruntime computes them (Resize-10's nearest only
    for whole scales, Upsample only upwards); the Session reads the export as the
    original."""
    sc = np.array([1.0, 1.0] + scales, np.float32)
    original = _single("Resize", {"mode": mode, "coordinate_transformation_mode": "asymmetric",
                                  "nearest_mode": "floor"}, shape=(1, 2, 5, 4),
                       inputs=("x", "", "scales"), inits=_consts(scales=sc))
    feeds = _x((1, 2, 5, 4))
    if target not in targets:
        with pytest.raises(ConversionError, match=rf"cannot write Resize node 'the_resize' "
                                                  rf"at opset {target} .*its scales"):
            to_onnx(from_onnx(original), opset=target)
        return
    proto = _exported(original, target)
    want = _ort(original, feeds)[0]
    np.testing.assert_allclose(_ort(proto, feeds)[0], want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(og.Session(from_onnx(proto)).run(["y"], feeds)[0], want,
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("attrs,why", [
    ({"mode": "linear"}, r"coordinate_transformation_mode 'half_pixel' came in at opset 11"),
    ({"mode": "cubic", "coordinate_transformation_mode": "asymmetric"},
     r"its mode 'cubic' came in at opset 11"),
    ({"coordinate_transformation_mode": "asymmetric"},
     r"its nearest_mode 'round_prefer_floor' came in at opset 11")])
def test_resize_that_resize_10_cannot_compute_is_refused_by_name(attrs, why):
    sc = np.array([1, 1, 2, 2], np.float32)
    original = _single("Resize", attrs, shape=(1, 2, 5, 4), inputs=("x", "", "scales"),
                       inits=_consts(scales=sc))
    with pytest.raises(ConversionError, match=r"cannot write Resize node 'the_resize' at "
                                              r"opset 10 .*" + why):
        to_onnx(from_onnx(original), opset=10)

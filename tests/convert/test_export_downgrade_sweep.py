"""Exporting to an older opset than the model's: what a sweep of `to_onnx(model, opset=k)`
found, and a sample of the sweep as a regression test.

The sweep took every ONNX backend node test that onegraph passes whose opset is above
13 (1,468 cases; the known failures skipped), the onnx wheel's light models brought up
to opset 21, and the zoo transformer; imported each with `from_onnx` and exported it at
every target from 13 to one below its opset (13,680 exports). Each result was either
refused with a ConversionError, or checked by ONNX's checker (full_check) and run in
onnxruntime on the case's inputs against its stored outputs (ONNX's reference evaluator
where onnxruntime cannot run the op's version). With the fixes below: 10,062 exported
and matching, 3,618 refused (each naming the node, the op, the target and the opset of
the change), nothing else.

Here: a test for each finding (each failed before its fix), then `test_sweep_sample`,
a spread of (case, target) pairs across op families, each run in onnxruntime against
the case's stored reference outputs, and `test_sweep_refusals_name_node_op_and_opsets`.
"""

import re

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from onegraph.convert import from_onnx, to_onnx
from onegraph.errors import ConversionError


def _ort(proto, feeds):
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _if_model(then_nodes, then_out, source, x_shape, inits=(), x_type=TensorProto.FLOAT):
    """y = If(c) with `then_nodes` (their output `then_out`) in the then branch and
    Identity(x) in the else branch."""
    x = helper.make_tensor_value_info("x", x_type, list(x_shape))
    c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    y = helper.make_tensor_value_info("y", x_type, list(x_shape))
    then_g = helper.make_graph(then_nodes, "then", [], [
        helper.make_tensor_value_info(then_out, x_type, list(x_shape))])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["e"], name="ident")],
                               "else", [], [helper.make_tensor_value_info("e", x_type,
                                                                          list(x_shape))])
    node = helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g,
                            name="the_if")
    return helper.make_model(helper.make_graph([node], "g", [x, c], [y], list(inits)),
                             opset_imports=[helper.make_opsetid("", source)])


# --------------------------------------------------------------------------------------
# D1: a node inside an If/Loop/Scan that onegraph keeps as it is never reached onnx's
# version converter: an op newer than the target, or one the converter must adapt, was
# written unchanged (check=False: a model the checker and onnxruntime refuse; with the
# checker: its message about the If, not the node)
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("check", [True, False])
def test_newer_op_inside_a_kept_if_is_refused_by_name(check):
    """BitwiseNot (opset 18) in an If of an opset-21 model, written at 17."""
    original = _if_model([helper.make_node("BitwiseNot", ["x"], ["t"], name="bnot")], "t",
                         21, (3,), x_type=TensorProto.INT32)
    with pytest.raises(ConversionError, match=r"cannot write BitwiseNot \(node 'bnot'\) at "
                                              r"opset 17: the op came in at opset 18"):
        to_onnx(from_onnx(original), opset=17, check=check)
    # at its own opset the If goes down to 18 and runs as the original does
    proto = to_onnx(from_onnx(original), opset=18)
    onnx.checker.check_model(proto, full_check=True)
    x = np.array([0, 5, -7], np.int32)
    for cond in (True, False):
        feeds = {"x": x, "c": np.array(cond)}
        np.testing.assert_array_equal(_ort(proto, feeds)[0], _ort(original, feeds)[0])


@pytest.mark.parametrize("check", [True, False])
def test_changed_op_inside_a_kept_if_is_refused_by_name(check):
    """A DFT-20 (axis as an input; 17-19 take an attribute) in an If, written at 19:
    onnx's converter would move a constant axis, but it does not enter the kept If."""
    axis = numpy_helper.from_array(np.array(1, np.int64), "axis_value")
    nodes = [helper.make_node("Constant", [], ["axis"], value=axis, name="axis"),
             helper.make_node("DFT", ["x", "", "axis"], ["t"], name="dft")]
    original = _if_model(nodes, "t", 21, (1, 4, 2))
    with pytest.raises(ConversionError, match=r"cannot write DFT \(node 'dft'\) at opset 19: "
                                              r"it changed at opset 20 .*inside If node "
                                              r"'the_if'"):
        to_onnx(from_onnx(original), opset=19, check=check)


def _assert_both_branches_as_original(original, opset, x, tol):
    """Export `original` (an `_if_model`) at `opset`, check it fully and run both of
    its If's branches in onnxruntime against the original's."""
    proto = to_onnx(from_onnx(original), opset=opset)
    onnx.checker.check_model(proto, full_check=True)
    for cond in (True, False):
        feeds = {"x": x, "c": np.array(cond)}
        np.testing.assert_allclose(_ort(proto, feeds)[0], _ort(original, feeds)[0],
                                   rtol=tol, atol=tol)


@pytest.mark.parametrize("op", ["ReduceProd", "ReduceMean", "ReduceLogSumExp"])
def test_reduction_over_every_axis_inside_a_kept_if_goes_below_18(op):
    """A reduction with no axes (input at 18, attribute before) means every axis in
    both versions: kept as it is inside a kept If (jax2onnx writes one in a Loop)."""
    node = helper.make_node(op, ["x"], ["r"], keepdims=1, name="red")
    expand = helper.make_node("Expand", ["r", "shape"], ["t"], name="expand")
    shape = numpy_helper.from_array(np.array([2, 3], np.int64), "shape")
    original = _if_model([node, expand], "t", 21, (2, 3), [shape])
    x = np.random.default_rng(17).uniform(0.5, 1.5, (2, 3)).astype(np.float32)
    _assert_both_branches_as_original(original, 17, x, 1e-6)


def test_group_norm_21_inside_a_kept_if_goes_to_20_as_its_body():
    """GroupNormalization-21 (scale and bias per channel; 18-20 per group) in an If: it
    was written as it came, a GroupNormalization-18 that passed the checker and that
    onnxruntime could not broadcast at run time; now its function body (D7)."""
    inits = [numpy_helper.from_array(np.array([1, 2, 3, 4], np.float32), "scale"),
             numpy_helper.from_array(np.array([0, 1, 0, -1], np.float32), "bias")]
    node = helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["t"],
                            num_groups=2, name="gn")
    original = _if_model([node], "t", 21, (1, 4, 3), inits)
    x = np.random.default_rng(16).standard_normal((1, 4, 3)).astype(np.float32)
    _assert_both_branches_as_original(original, 20, x, 1e-5)


# --------------------------------------------------------------------------------------
# D2: a value of an optional or sequence type that the op takes only from a later opset
# (Identity and If/Loop take optionals from 16) was written at the target anyway: the
# checker's message, or with check=False a model onnxruntime refuses
# --------------------------------------------------------------------------------------

def _optional_seq_info(name):
    seq = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT,
                                                                        [2]))
    return helper.make_value_info(name, helper.make_optional_type_proto(seq))


def _identity_of_optional(source=16):
    node = helper.make_node("Identity", ["opt_in"], ["opt_out"], name="ident")
    graph = helper.make_graph([node], "g", [_optional_seq_info("opt_in")],
                              [_optional_seq_info("opt_out")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", source)])


@pytest.mark.parametrize("check", [True, False])
@pytest.mark.parametrize("target", [13, 15])
def test_optional_through_identity_below_16_is_refused_by_name(target, check):
    with pytest.raises(ConversionError, match=rf"cannot write Identity \(node 'ident'\) at "
                                              rf"opset {target}: its input 0 \('opt_in'\) is "
                                              r"optional\(seq\(tensor\(float\)\)\), which "
                                              r"Identity accepts from opset 16"):
        to_onnx(from_onnx(_identity_of_optional()), opset=target, check=check)


@pytest.mark.parametrize("check", [True, False])
def test_optional_out_of_an_if_below_16_is_refused_by_name(check):
    """The If's then branch gives an empty optional, its else branch Optional(seq)."""
    seq_t = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT,
                                                                          [2]))
    then_g = helper.make_graph([helper.make_node("Optional", [], ["none"], type=seq_t)],
                               "then", [], [_optional_seq_info("none")])
    x = numpy_helper.from_array(np.array([1, 2], np.float32))
    else_g = helper.make_graph([
        helper.make_node("Constant", [], ["x"], value=x),
        helper.make_node("SequenceConstruct", ["x"], ["s"]),
        helper.make_node("Optional", ["s"], ["some"])], "else", [],
        [_optional_seq_info("some")])
    node = helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g,
                            name="the_if")
    original = helper.make_model(helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [_optional_seq_info("y")]), opset_imports=[helper.make_opsetid("", 16)])
    with pytest.raises(ConversionError, match=r"cannot write If \(node 'the_if'\) at opset "
                                              r"15: its output 0 \('y'\) is optional\(seq\("
                                              r"tensor\(float\)\)\), which If accepts from "
                                              r"opset 16"):
        to_onnx(from_onnx(original), opset=15, check=check)


# --------------------------------------------------------------------------------------
# D3: OptionalHasElement without an input, or of a plain tensor, and OptionalGetElement
# of a plain tensor (all from opset 18) were written as they came below 18 (the checker
# refused them; with check=False onnxruntime did); below 15 the ops were refused. Their
# values are a constant false / true and the tensor itself, at every opset.
# --------------------------------------------------------------------------------------

def _optional_op_model(op, has_input):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y_type = TensorProto.BOOL if op == "OptionalHasElement" else TensorProto.FLOAT
    y = helper.make_tensor_value_info("y", y_type, [] if y_type == TensorProto.BOOL else
                                      [2, 3])
    node = helper.make_node(op, ["x"] if has_input else [], ["y"], name="the_op")
    # (Y depends on x only through the node: keep x used for the no-input case)
    extra = [] if has_input else [helper.make_node("Identity", ["x"], ["x_out"],
                                                   name="keep")]
    outputs = [y] + ([] if has_input else [helper.make_tensor_value_info(
        "x_out", TensorProto.FLOAT, [2, 3])])
    return helper.make_model(helper.make_graph([node] + extra, "g", [x], outputs),
                             opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize("target", [13, 15, 17])
@pytest.mark.parametrize("op,has_input", [("OptionalHasElement", False),
                                          ("OptionalHasElement", True),
                                          ("OptionalGetElement", True)])
def test_optional_ops_on_plain_tensors_go_below_18(op, has_input, target):
    original = _optional_op_model(op, has_input)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = {"OptionalHasElement": np.array(has_input), "OptionalGetElement": x}[op]
    np.testing.assert_array_equal(_ort(original, {"x": x})[0], want)   # the oracle agrees
    proto = to_onnx(from_onnx(original), opset=target)
    assert [o.version for o in proto.opset_import if o.domain == ""] == [target]
    onnx.checker.check_model(proto, full_check=True)
    got = _ort(proto, {"x": x})[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


# --------------------------------------------------------------------------------------
# D4: refusals in onnx's converter's words, naming no node (and for DFT no op): an
# input the older op lacks (Attention's nonpad_kv_seqlen, opset 24), DFT's axis input
# (opset 20) computed at run time
# --------------------------------------------------------------------------------------

def test_input_the_older_op_lacks_is_refused_by_name():
    shape = [1, 2, 3, 4]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in "QKV"]
    inputs.append(helper.make_tensor_value_info("lens", TensorProto.INT64, [1]))
    node = helper.make_node("Attention", ["Q", "K", "V", "", "", "", "lens"], ["y"],
                            name="attn")
    original = helper.make_model(helper.make_graph(
        [node], "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)]),
        opset_imports=[helper.make_opsetid("", 24)])
    with pytest.raises(ConversionError, match=r"cannot write Attention node 'attn' at opset "
                                              r"23: its input 6 \('lens'\) came in at opset "
                                              r"24; export at opset 24 or later"):
        to_onnx(from_onnx(original), opset=23)


def _dft(axis_as_input):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 2])
    inputs, inits = [x], []
    if axis_as_input:
        inputs.append(helper.make_tensor_value_info("axis", TensorProto.INT64, []))
    else:
        inits.append(numpy_helper.from_array(np.array(1, np.int64), "axis"))
    node = helper.make_node("DFT", ["x", "", "axis"], ["y"], name="the_dft")
    return helper.make_model(helper.make_graph([node], "g", inputs, [y], inits),
                             opset_imports=[helper.make_opsetid("", 20)])


def test_dft_axis_computed_at_run_time_is_refused_by_name():
    with pytest.raises(ConversionError, match=r"cannot write DFT node 'the_dft' at opset 19 "
                                              r"\(it changed at opset 20 in a way the node "
                                              r"uses\): its axis is computed at run time, and "
                                              r"before opset 20 DFT takes it only as an "
                                              r"attribute; export at a later opset"):
        to_onnx(from_onnx(_dft(axis_as_input=True)), opset=19)


@pytest.mark.parametrize("target", [17, 19])
def test_dft_constant_axis_goes_below_20(target):
    x = np.array([1, 2, 0, -1], np.float32).reshape(1, 4, 1)
    proto = to_onnx(from_onnx(_dft(axis_as_input=False)), opset=target)
    onnx.checker.check_model(proto, full_check=True)
    want = np.fft.fft(x[0, :, 0])
    got = _ort(proto, {"x": x})[0]
    np.testing.assert_allclose(got[0, :, 0] + 1j * got[0, :, 1], want, atol=1e-5)


# --------------------------------------------------------------------------------------
# D5: Mod with fmod=0 (floor modulo) on floats (opset 28) was refused below 28: it is
# fmod's remainder moved by the divisor where their signs differ (numpy's mod)
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE])
@pytest.mark.parametrize("target", [13, 27])
def test_floor_mod_of_floats_goes_below_28(dtype, target):
    np_type = helper.tensor_dtype_to_np_dtype(dtype)
    x = np.array([5, -5, 5, -5, 0, -0.0, 3, np.inf, 1, -1, np.nan, 7.5, -7.5, 4, 1e4, -2.25],
                 np_type)
    y = np.array([3, 3, -3, -3, 2, -2, 0, 2, np.inf, np.inf, 1, -2, 2, -2, 3, 0.5], np_type)
    inputs = [helper.make_tensor_value_info(n, dtype, [len(x)]) for n in "xy"]
    node = helper.make_node("Mod", ["x", "y"], ["z"], fmod=0, name="the_mod")
    original = helper.make_model(helper.make_graph(
        [node], "g", inputs, [helper.make_tensor_value_info("z", dtype, [len(x)])]),
        opset_imports=[helper.make_opsetid("", 28)])
    proto = to_onnx(from_onnx(original), opset=target)
    onnx.checker.check_model(proto, full_check=True)
    got = _ort(proto, {"x": x, "y": y})[0]
    with np.errstate(all="ignore"):
        want = np.mod(x, y)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    # (zeros take the divisor's sign; a NaN's sign means nothing)
    numbers = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))


def test_floor_mod_of_bfloat16_below_28_is_still_refused():
    """(The rewrite's constants are float16, float or double.)"""
    bf = helper.make_model(helper.make_graph(
        [helper.make_node("Mod", ["a", "b"], ["z"], fmod=0, name="the_mod")], "g",
        [helper.make_tensor_value_info(n, TensorProto.BFLOAT16, [3]) for n in "ab"],
        [helper.make_tensor_value_info("z", TensorProto.BFLOAT16, [3])]),
        opset_imports=[helper.make_opsetid("", 28)])
    with pytest.raises(ConversionError, match=r"cannot write Mod node 'the_mod' at opset 27: "
                                              r"Mod with fmod=0 \(floor modulo\) on floats "
                                              r"came in at opset 28"):
        to_onnx(from_onnx(bf), opset=27)


# --------------------------------------------------------------------------------------
# D6: Resize's axes attribute (opset 18) was refused below 18: its scales, sizes and
# roi over those axes are spread over every axis at run time (1, the input's own size,
# the whole extent on the others), as Resize-13 takes them
# --------------------------------------------------------------------------------------

def _resize_axes_model(which, axes, extra=None):
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, 4, 4])
    inputs = [x]
    names = ["X", "", "", ""]
    if which == "scales":
        inputs.append(helper.make_tensor_value_info("scales", TensorProto.FLOAT, [len(axes)]))
        names[2] = "scales"
    else:
        inputs.append(helper.make_tensor_value_info("sizes", TensorProto.INT64, [len(axes)]))
        names[3] = "sizes"
    attrs = {"axes": axes, "mode": "linear", **(extra or {})}
    if attrs.get("coordinate_transformation_mode") == "tf_crop_and_resize":
        inputs.append(helper.make_tensor_value_info("roi", TensorProto.FLOAT, [2 * len(axes)]))
        names[1] = "roi"
    while not names[-1]:
        names.pop()
    node = helper.make_node("Resize", names, ["Y"], name="the_resize", **attrs)
    return helper.make_model(helper.make_graph(
        [node], "g", inputs, [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)]),
        opset_imports=[helper.make_opsetid("", 19)])


@pytest.mark.parametrize("target", [13, 17])
@pytest.mark.parametrize("which,axes,extra,value", [
    ("scales", [2, 3], None, [2.0, 0.5]),
    ("scales", [3, -2], None, [1.5, 2.0]),
    ("sizes", [2, 3], None, [3, 7]),
    ("sizes", [-1], None, [6]),
    ("sizes", [3, 2], {"coordinate_transformation_mode": "tf_crop_and_resize",
                       "extrapolation_value": -1.0}, [3, 5]),
])
def test_resize_axes_go_below_18(which, axes, extra, value, target):
    original = _resize_axes_model(which, axes, extra)
    x = np.random.default_rng(15).standard_normal((1, 2, 4, 4)).astype(np.float32)
    feeds = {"X": x, which: np.array(value, np.float32 if which == "scales" else np.int64)}
    if extra:
        feeds["roi"] = np.array([0.1, 0.2, 0.9, 1.1], np.float32)
    want = _ort(original, feeds)[0]
    proto = to_onnx(from_onnx(original), opset=target)
    assert [o.version for o in proto.opset_import if o.domain == ""] == [target]
    onnx.checker.check_model(proto, full_check=True)
    got = _ort(proto, feeds)[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_optional_get_element_of_a_sequence_goes_below_18():
    """OptionalGetElement of a plain sequence (opset 18) is the sequence: an Identity,
    which takes sequences from opset 14; at 13 that Identity is refused by name (it
    was refused in onnx's converter's words, naming no node)."""
    seq = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.INT32,
                                                                        [3]))
    node = helper.make_node("OptionalGetElement", ["s"], ["y"], name="get")
    original = helper.make_model(helper.make_graph(
        [node], "g", [helper.make_value_info("s", seq)], [helper.make_value_info("y", seq)]),
        opset_imports=[helper.make_opsetid("", 18)])
    value = [np.array([1, 2, 3], np.int32), np.array([4, 5, 6], np.int32)]
    for target in (14, 17):
        proto = to_onnx(from_onnx(original), opset=target)
        onnx.checker.check_model(proto, full_check=True)
        got = _ort(proto, {"s": value})[0]
        assert len(got) == 2
        for g, w in zip(got, value):
            np.testing.assert_array_equal(g, w)
    with pytest.raises(ConversionError, match=r"cannot write Identity \(node 'get'\) at opset "
                                              r"13: its input 0 \('s'\) is seq\(tensor\(int32"
                                              r"\)\), which Identity accepts from opset 14"):
        to_onnx(from_onnx(original), opset=13)


# --------------------------------------------------------------------------------------
# A sample of the sweep: ONNX backend node cases exported at an older opset, run in
# onnxruntime against the case's stored outputs; and refusals that must name the node,
# the op, the target and the opset the change came at
# --------------------------------------------------------------------------------------

# (case, target): held ops of most families, the rewrites (Gelu, LayerNormalization,
# RMSNormalization, Mish, HardSwish, Trilu, Shape's start/end, Split's num_outputs, Mod's
# floor modulo, Resize's axes, the optional ops), ONNX's function ops through the inliner
# (Swish, SwiGLU, RotaryEmbedding, Attention, AffineGrid, CenterCropPad, the windows),
# control flow and sequences
SAMPLE = [
    ('test_add', 13), ('test_affine_grid_2d', 16),
    ('test_attention_3d_local_window', 13), ('test_averagepool_1d_default', 21),
    ('test_batchnorm_epsilon', 14), ('test_bitshift_left_uint16', 13),
    ('test_cast_DOUBLE_to_FLOAT', 27), ('test_castlike_DOUBLE_to_FLOAT', 19),
    ('test_causal_conv_with_state_b1_c1_degenerate', 13), ('test_center_crop_pad_crop', 17),
    ('test_basic_conv_with_padding', 17), ('test_convtranspose', 13), ('test_cumsum_1d', 13),
    ('test_basic_deform_conv_with_padding', 19),
    ('test_depthtospace_crd_mode_example', 27), ('test_dequantizelinear', 20),
    ('test_dropout_default', 13), ('test_einsum_batch_diagonal', 27), ('test_equal', 16),
    ('test_flatten_axis0', 13), ('test_gru_bidirectional', 21), ('test_gelu_default_1', 16),
    ('test_globalaveragepool', 13), ('test_gridsample', 21),
    ('test_group_normalization_epsilon', 15), ('test_hannwindow', 13), ('test_hardswish', 21),
    ('test_lstm_bidirectional', 17), ('test_layer_normalization_2d_axis0', 13),
    ('test_less_equal', 15), ('test_linear_attention_decode_step', 20),
    ('test_lppool_1d_default', 13), ('test_maxpool_1d_default', 21), ('test_mish', 17),
    ('test_mod_broadcast', 13), ('test_nllloss_NC', 21), ('test_onehot_negative_indices', 20),
    ('test_optional_get_element_optional_sequence', 15),
    ('test_optional_has_element_empty_no_input_name_optional_input', 27),
    ('test_constant_pad', 19), ('test_pow', 13), ('test_qlinearmatmul_2D_int8_float32', 20),
    ('test_quantizelinear', 20), ('test_rms_normalization_2d_axis0', 13),
    ('test_rnn_seq_length', 21), ('test_reduce_log_sum_asc_axes', 23),
    ('test_reduce_log_sum_exp_default_axes_keepdims_example', 18),
    ('test_reduce_max_empty_set', 19), ('test_reshape_allowzero_reordered', 19),
    ('test_resize_downsample_scales_cubic', 13), ('test_roialign_aligned_false', 21),
    ('test_rotary_embedding', 18), ('test_scatter_elements_with_axis', 13), ('test_shape', 24),
    ('test_split_1d_uneven_split_opset18', 15), ('test_split_to_sequence_1', 13),
    ('test_swiglu', 24), ('test_swish', 18), ('test_top_k', 13),
    ('test_transpose_all_permutations_0', 24), ('test_tril', 13), ('test_unique_length_1', 13),
    ('test_unsqueeze_axis_0', 24), ('test_layer_normalization_4d_axis1_expanded_ver18', 17),
    ('test_hardswish_expanded', 13), ('test_attention_3d_expanded', 22),
    ('test_sequence_map_add_2_sequences', 13),
    ('test_range_float_type_positive_delta_expanded', 26),
    ('test_center_crop_pad_crop_expanded', 13), ('test_group_normalization_example_expanded', 20),
    ('test_gelu_default_2_expanded', 13), ('test_affine_grid_2d_expanded', 19),
    ('test_celu_float16_expanded', 13), ('test_mod_float32_mixed_sign_fmod_0', 13),
    ('test_resize_upsample_sizes_nearest_axes_2_3', 17),
    ('test_resize_tf_crop_and_resize_axes_3_2', 13),
    ('test_optional_has_element_empty_no_input_tensor_input', 15),
    ('test_optional_get_element_tensor', 13), ('test_optional_get_element_sequence', 14),
]


def _same(want, got, rtol, atol):
    """Compare one output (a tensor or a sequence of them) at the case's tolerances,
    looser for 16-bit floats (onnxruntime computes them with other roundings than the
    reference)."""
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for w, g in zip(want, got):
            _same(w, g, rtol, atol)
        return
    want, got = np.asarray(want), np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype.kind in "biuUSO":
        np.testing.assert_array_equal(got, want)
        return
    if want.dtype.itemsize <= 2:
        rtol, atol = max(rtol, 1e-2), max(atol, 1e-3)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                               atol=atol, equal_nan=True)


@pytest.mark.parametrize("case_name,target", SAMPLE)
def test_sweep_sample(node_cases, case_name, target):
    _check_against_stored(node_cases, case_name, target)


def _check_against_stored(node_cases, case_name, target):
    """Export the node case at `target`, check it, run it in onnxruntime and compare
    with the case's stored outputs."""
    from onegraph.convert.coverage import as_numpy

    case = node_cases[case_name]
    source = [o.version for o in case.model.opset_import if o.domain in ("", "ai.onnx")][0]
    assert 8 <= target < source
    proto = to_onnx(from_onnx(case.model), opset=target)
    assert [o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")] == [target]
    onnx.checker.check_model(proto, full_check=True)
    inits = {i.name for i in proto.graph.initializer}
    names = [i.name for i in proto.graph.input if i.name not in inits]
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for inputs, outputs in case.data_sets:
        feeds = {n: (np.asarray(v) if not isinstance(v, list) else v)
                 for n, v in zip(names, [as_numpy(x) for x in inputs])}
        got = sess.run(None, feeds)
        assert len(got) == len(outputs)
        for want, g in zip(outputs, got):
            _same(as_numpy(want), g, case.rtol, case.atol)


# (case, target, op, an opset the refusal must name besides the target)
REFUSED = [
    ("test_bitshift_left_int32", 13, "BitShift", 28),               # element type
    ("test_bitwise_not_3d", 17, "BitwiseNot", 18),                   # op newer than target
    ("test_reduce_mean_keepdims_example", 17, "ReduceMean", 18),     # axes at run time
    ("test_scatternd_max", 17, "ScatterND", 18),                     # attribute value
    ("test_averagepool_2d_dilations", 18, "AveragePool", 19),        # attribute
    ("test_attention_4d_causal_nonpad_batch_prefill", 23, "Attention", 24),   # input (D4)
    ("test_dft", 19, "DFT", 20),                                     # axis at run time (D4)
    ("test_identity_opt", 15, "Identity", 16),                       # optional type (D2)
    ("test_if_opt", 15, "If", 16),                                   # optional type (D2)
    ("test_if_opt", 13, "Optional", 15),                             # inside a kept If (D1)
    ("test_gridsample_volumetric_nearest_align_corners_0", 19, "GridSample", 20),
    ("test_cast_FLOAT_to_FLOAT8E4M3FN", 18, "Cast", 19),
    # a node of an inlined function body (SpaceToDepth-28's), which has no name (D8)
    ("test_spacetodepth_crd_mode_example", 13, "Reshape", 14),
]


@pytest.mark.parametrize("case_name,target,op,since", REFUSED)
def test_sweep_refusals_name_node_op_and_opsets(node_cases, case_name, target, op, since):
    case = node_cases[case_name]
    model = from_onnx(case.model)
    for check in (True, False):
        with pytest.raises(ConversionError) as caught:
            to_onnx(model, opset=target, check=check)
        text = str(caught.value)
        assert re.match(rf"cannot write {op} (\(node '[^']+'\)|node '[^']+') at opset "
                        rf"{target}\b", text), text
        assert f"opset {since}" in text, text


# --------------------------------------------------------------------------------------
# D7: an op that exists at the target but that a node uses in a newer form (Attention's
# window attributes from 25; GroupNormalization-21's scale and bias per channel) was
# refused, though ONNX defines the op as a function whose body is older ops: the body
# is written instead (where onnx's inliner can expand it: not with an omitted optional
# input before a given one, as Attention's nonpad_kv_seqlen cases have)
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("case_name,target", [
    ("test_attention_local_window", 23), ("test_attention_bidirectional_window", 24),
    ("test_attention_3d_local_window", 13), ("test_attention_local_window_gqa_rank4_mask", 24),
    ("test_group_normalization_example", 18), ("test_group_normalization_epsilon", 20),
])
def test_function_op_in_a_newer_form_is_written_as_its_body(node_cases, case_name, target):
    case = node_cases[case_name]
    op = case.model.graph.node[0].op_type
    proto = to_onnx(from_onnx(case.model), opset=target)
    assert op not in {n.op_type for n in proto.graph.node}
    _check_against_stored(node_cases, case_name, target)


def test_sequence_through_identity_below_14_keeps_the_map_fn_hint():
    """The checker's message for this had a hint for og.map_fn / og.scan users; the
    refusal by name (D2) that now comes first keeps it."""
    seq = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT,
                                                                        [2]))
    node = helper.make_node("Identity", ["s"], ["y"], name="ident")
    original = helper.make_model(helper.make_graph(
        [node], "g", [helper.make_value_info("s", seq)], [helper.make_value_info("y", seq)]),
        opset_imports=[helper.make_opsetid("", 14)])
    with pytest.raises(ConversionError, match=r"cannot write Identity \(node 'ident'\) at "
                                              r"opset 13: .*export with opset 14 or later "
                                              r"\(og.map_fn and og.scan carry their rows"):
        to_onnx(from_onnx(original), opset=13)


@pytest.mark.parametrize("target", [12, 11, 10, 9])
@pytest.mark.parametrize("op", ["Squeeze", "Unsqueeze", "Split"])
def test_axes_inputs_inside_an_if_go_below_13(op, target):
    """Squeeze's and Unsqueeze's axes and Split's sizes (inputs from 13, attributes
    before) inside an If: onnx's converter moves them for the nodes it reaches, but
    does not enter the If's branches, where onegraph writes the attribute itself."""
    shape = (2, 3, 4)
    if op == "Split":
        sizes = numpy_helper.from_array(np.array([1, 3], np.int64), "sizes")
        nodes = [helper.make_node("Constant", [], ["sz"], value=sizes, name="sizes"),
                 helper.make_node("Split", ["x", "sz"], ["a", "b"], axis=-1, name="split"),
                 helper.make_node("Concat", ["b", "a"], ["t"], axis=2, name="swap")]
    else:
        axes = numpy_helper.from_array(np.array([-1], np.int64), "axes_value")
        other = "Squeeze" if op == "Unsqueeze" else "Unsqueeze"
        nodes = [helper.make_node("Constant", [], ["axes"], value=axes, name="axes"),
                 helper.make_node(op, ["x", "axes"], ["m"], name=op.lower())]
        if op == "Squeeze":   # x's last axis is 4: squeeze what Unsqueeze added
            nodes.insert(1, helper.make_node(other, ["x", "axes"], ["x1"], name="pre"))
            nodes[2].input[0] = "x1"
            nodes.append(helper.make_node("Identity", ["m"], ["t"], name="same"))
        else:
            nodes.append(helper.make_node(other, ["m", "axes"], ["t"], name="back"))
    original = _if_model(nodes, "t", 13, shape)
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    _assert_both_branches_as_original(original, target, x, 0)


@pytest.mark.parametrize("target", [12, 11, 10, 9])
@pytest.mark.parametrize("op", ["Squeeze", "Split", "ReduceSum"])
def test_axes_inputs_left_out_inside_an_if_go_below_13(op, target):
    """Squeeze, Split and ReduceSum without their axes or sizes (every axis of length
    1, equal parts, every axis) mean the same before 13, where these were attributes:
    such nodes are kept as they are inside an If (tf2onnx's GRU cell splits its gates
    so inside its Loop)."""
    shape = (2, 1, 4)
    if op == "Split":
        nodes = [helper.make_node("Split", ["x"], ["a", "b"], axis=-1, name="split"),
                 helper.make_node("Concat", ["b", "a"], ["t"], axis=2, name="swap")]
    else:
        nodes = [helper.make_node(op, ["x"], ["m"], name=op.lower(),
                                  **({"keepdims": 1} if op == "ReduceSum" else {})),
                 helper.make_node("Add", ["x", "m"] if op == "ReduceSum" else ["x", "x"],
                                  ["t"], name="add")]
        if op == "Squeeze":   # (2, 4) back to (2, 1, 4)
            nodes[1] = helper.make_node("Unsqueeze", ["m", "one"], ["t"], name="back")
            nodes.insert(0, helper.make_node("Constant", [], ["one"], name="one",
                                             value=numpy_helper.from_array(
                                                 np.array([1], np.int64))))
    original = _if_model(nodes, "t", 13, shape)
    x = np.random.default_rng(6).standard_normal(shape).astype(np.float32)
    _assert_both_branches_as_original(original, target, x, 1e-6)

"""Exporting to an older opset than the model's: what a sweep of `to_onnx(model, opset=k)`
found, and a sample of the sweep as a regression test.

The sweep took every ONNX backend node test that onegraph passes whose opset is above
13 (1,468 cases; the known failures skipped), the onnx wheel's light models brought up
to opset 21, and the zoo transformer; imported each with `from_onnx` and exported it at
every target from 13 to one below its opset (13,680 exports). Each result was either
refused with a ConversionError, or checked by ONNX's checker (full_check) and run in
onnxruntime on the case's inputs against its stored outputs (ONNX's reference evaluator
where onnxruntime cannot run the op's version).

Here: a test for each finding (each failed before its fix), then
`test_sweep_sample`, a spread of (case, target) pairs across op families, each run in
onnxruntime against the case's stored reference outputs.
"""

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
    """GroupNormalization-21 (scale and bias per channel; 18-20 per group) in an If,
    written at 20: it was written as it came, a GroupNormalization-18 whose scale
    onnxruntime cannot broadcast."""
    inits = [numpy_helper.from_array(np.array([1, 2, 3, 4], np.float32), "scale"),
             numpy_helper.from_array(np.array([0, 1, 0, -1], np.float32), "bias")]
    node = helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["t"],
                            num_groups=2, name="gn")
    original = _if_model([node], "t", 21, (1, 4, 3), inits)
    with pytest.raises(ConversionError, match=r"cannot write GroupNormalization \(node 'gn'"
                                              r"\) at opset 20: it changed at opset 21 .*"
                                              r"inside If node 'the_if'"):
        to_onnx(from_onnx(original), opset=20, check=check)


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

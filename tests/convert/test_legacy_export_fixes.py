"""Old-opset ops the version converter upgrades wrongly (Hardmax before 13, Upsample
and Resize before 11), and export fixes (unique node names, GroupNormalization-18 at
opset 21, real tensor names with the omitted-output prefix). Every result is checked
against onnxruntime running the original model."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from onegraph.convert import from_onnx, to_onnx
from onegraph.convert.onnx_import import OMITTED_OUTPUT_PREFIX
from onegraph.convert.onnx_legacy import needs_legacy_rewrite, rewrite_legacy
from onegraph.errors import ConversionError
from onegraph.format import Graph, Model
from onegraph.train.session import Session

F = TensorProto.FLOAT


def _info(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes, inputs, outputs, opset, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model


def _ort(model_or_path, feeds):
    src = model_or_path if isinstance(model_or_path, str) else \
        model_or_path.SerializeToString()
    return ort.InferenceSession(src, providers=["CPUExecutionProvider"]).run(None, feeds)


def _check_all_ways(model, feeds, tmp_path, names=None):
    """onegraph's Session on the imported model, and onnxruntime on its export, both
    against onnxruntime on the original model (all read from files)."""
    src = str(tmp_path / "original.onnx")
    onnx.save_model(model, src)
    want = _ort(src, feeds)
    imported = from_onnx(src)
    names = names or [o.name for o in model.graph.output]
    got = Session(imported).run(names, feeds)
    out = str(tmp_path / "exported.onnx")
    to_onnx(imported, out)
    back = _ort(out, feeds)
    for w, g, b in zip(want, got, back):
        assert g.shape == w.shape and b.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b, w, rtol=1e-5, atol=1e-6)
    return imported


# ------------------------------------------------------------------------ Hardmax

@pytest.mark.parametrize("opset,shape,axis", [
    (11, [2, 3, 4], 1), (12, [2, 3, 4], 1), (12, [2, 3, 4], None), (11, [2, 3, 4], -2),
    (9, [2, 3, 4, 2], 2), (7, [2, 3, 4], 0), (12, [2, 3, 4], 2),
])
def test_old_hardmax_coerces_to_2d_like_onnxruntime(opset, shape, axis, tmp_path):
    kw = {} if axis is None else {"axis": axis}
    model = _model([helper.make_node("Hardmax", ["x"], ["y"], name="hm", **kw)],
                   [_info("x", shape)], [_info("y", shape)], opset)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    imported = _check_all_ways(model, {"x": x}, tmp_path)
    assert "hm" in [n.name for n in imported.graph.nodes]


def test_old_hardmax_inside_an_if_branch(tmp_path):
    branch = helper.make_graph([helper.make_node("Hardmax", ["x"], ["t"], axis=1)], "then",
                               [], [_info("t", [2, 3, 4])])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                              [_info("e", [2, 3, 4])])
    model = _model([helper.make_node("If", ["c"], ["y"], then_branch=branch,
                                     else_branch=other)],
                   [_info("x", [2, 3, 4]), _info("c", [], TensorProto.BOOL)],
                   [_info("y", [2, 3, 4])], 11)
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    _check_all_ways(model, {"x": x, "c": np.array(True)}, tmp_path)


@pytest.mark.parametrize("opset", [1, 11, 12])
def test_old_squeeze_of_empty_axes_squeezes_every_unit_dim(opset, tmp_path):
    """onnxruntime and ONNX's reference read axes=[] as no axes; the converter made it
    an empty axes input, which squeezes nothing from opset 13 on."""
    node = helper.make_node("Squeeze", ["x"], ["y"])
    node.attribute.append(helper.make_attribute("axes", [], attr_type=onnx.AttributeProto.INTS))
    model = _model([node], [_info("x", [1, 3, 1, 2])], [_info("y", None)], opset)
    x = np.arange(6, dtype=np.float32).reshape(1, 3, 1, 2)
    imported = _check_all_ways(model, {"x": x}, tmp_path)
    assert Session(imported).run(["y"], {"x": x})[0].shape == (3, 2)


def test_legacy_rewrite_is_only_for_old_opsets_and_leaves_the_input_alone():
    model = _model([helper.make_node("Hardmax", ["x"], ["y"], axis=1)],
                   [_info("x", [2, 3, 4])], [_info("y", [2, 3, 4])], 12)
    assert needs_legacy_rewrite(model, 12)
    assert not needs_legacy_rewrite(model, 13)
    before = model.SerializeToString()
    out = rewrite_legacy(model)
    assert model.SerializeToString() == before
    assert [n.op_type for n in out.graph.node] == ["Flatten", "Hardmax", "Shape", "Reshape"]


# ------------------------------------------------------------------ Upsample, Resize

_SCALES = {
    "double": [1, 1, 2, 2],
    "grow": [1, 1, 1.25, 1.5],          # nearest: half_pixel rounding would differ
    "shrink": [1, 1, 0.6, 0.5],
    "mixed": [1, 1, 1.25, 0.7],         # nearest: floor on one axis, ceil on the other
    "mixed_channels": [1, 2.2, 1, 0.7],
}


def _resize_model(op, opset, mode, scales, dynamic):
    shape = [1, 2, 5, 7]
    inputs, inits = [_info("x", shape)], []
    if opset < 9:  # Upsample-7/8: scales as an attribute
        node = helper.make_node(op, ["x"], ["u"], name="rs", mode=mode,
                                scales=[float(s) for s in scales])
    else:
        node = helper.make_node(op, ["x", "sc"], ["u"], name="rs", mode=mode)
        if dynamic:
            inputs.append(_info("sc", [4]))
        else:
            inits.append(numpy_helper.from_array(np.array(scales, np.float32), "sc"))
    # u is an intermediate value: its name must survive the Upsample -> Resize upgrade
    nodes = [node, helper.make_node("Neg", ["u"], ["y"], name="neg")]
    model = _model(nodes, inputs, [_info("y", None)], opset, inits)
    feeds = {"x": np.random.default_rng(2).standard_normal(shape).astype(np.float32)}
    if dynamic:
        feeds["sc"] = np.array(scales, np.float32)
    return model, feeds


_RESIZE_CASES = [
    (op, opset, mode, key, dynamic)
    for op, opset in (("Upsample", 7), ("Upsample", 8), ("Upsample", 9), ("Resize", 10))
    for mode in ("linear", "nearest")
    for key in _SCALES
    for dynamic in ((False, True) if opset >= 9 else (False,))
    # Upsample only grows; onnxruntime's old linear resizes only the inner axes
    if not (op == "Upsample" and min(_SCALES[key]) < 1)
    and not (mode == "linear" and _SCALES[key][1] != 1)
]


@pytest.mark.parametrize("op,opset,mode,key,dynamic", _RESIZE_CASES)
def test_old_upsample_and_resize_use_asymmetric_coordinates(op, opset, mode, key, dynamic,
                                                            tmp_path):
    model, feeds = _resize_model(op, opset, mode, _SCALES[key], dynamic)
    imported = _check_all_ways(model, feeds, tmp_path)
    # the converter's Upsample adapter drops the node's name and renames its output
    assert imported.graph.find_tensor("u") is not None
    assert "rs" in [n.name for n in imported.graph.nodes]
    np.testing.assert_allclose(Session(imported).run(["u"], feeds)[0],
                               _ort(model, feeds)[0] * -1, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ unique node names

def test_synthesized_name_clashing_with_a_real_one_is_made_unique(tmp_path):
    model = _model([helper.make_node("Relu", ["x"], ["a"]),                # -> "Relu_0"
                    helper.make_node("Neg", ["a"], ["y"], name="Relu_0")],  # a real name
                   [_info("x", [2])], [_info("y", [2])], 17)
    x = np.array([-1.0, 2.0], np.float32)
    _check_all_ways(model, {"x": x}, tmp_path)
    nodes = to_onnx(from_onnx(model)).graph.node
    assert len({n.name for n in nodes}) == 2
    assert next(n.name for n in nodes if n.op_type == "Neg") == "Relu_0"


def test_python_built_graph_with_a_repeated_node_name(tmp_path):
    g = Graph("g")
    x = g.add_input("x", "float32", [2])
    (a,) = g.add_node("Neg", [x], ["a"], name="flip")
    (y,) = g.add_node("Neg", [a], ["y"], name="flip")
    g.outputs = [y]
    model = Model(graphs=[g], opset_imports={"": 17})
    path = str(tmp_path / "neg.onnx")
    exported = to_onnx(model, path)
    assert [n.name for n in exported.graph.node] == ["flip", "flip_1"]
    feeds = {"x": np.array([-1.0, 2.0], np.float32)}
    np.testing.assert_allclose(_ort(path, feeds)[0], feeds["x"])


def test_repeated_node_names_keep_the_first_and_suffix_the_rest(tmp_path):
    # onnxruntime refuses the original, so it runs a copy with the names removed
    branch = helper.make_graph([helper.make_node("Neg", ["x"], ["t1"], name="n"),
                                helper.make_node("Neg", ["t1"], ["t"], name="n")],
                               "then", [], [_info("t", [2])])
    other = helper.make_graph([helper.make_node("Relu", ["x"], ["e"], name="n")], "else",
                              [], [_info("e", [2])])
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="n"),
             helper.make_node("Neg", ["a"], ["b"], name="n"),
             helper.make_node("Abs", ["b"], ["c"], name="n_1"),
             helper.make_node("If", ["cond"], ["d"], then_branch=branch, else_branch=other,
                              name="n"),
             helper.make_node("Add", ["c", "d"], ["y"])]
    model = _model(nodes, [_info("x", [2]), _info("cond", [], TensorProto.BOOL)],
                   [_info("y", [2])], 17)
    exported = to_onnx(from_onnx(model))
    assert [n.name for n in exported.graph.node][:4] == ["n", "n_2", "n_1", "n_3"]
    then = next(a.g for a in exported.graph.node[3].attribute if a.name == "then_branch")
    assert [n.name for n in then.node] == ["n", "n_1"]  # unique within each graph
    unnamed = onnx.ModelProto()
    unnamed.CopyFrom(model)
    for node in [*unnamed.graph.node, *unnamed.graph.node[3].attribute[0].g.node,
                 *unnamed.graph.node[3].attribute[1].g.node]:
        node.name = ""
    path = str(tmp_path / "exported.onnx")
    onnx.save_model(exported, path)
    for cond in (True, False):
        feeds = {"x": np.array([-1.5, 2.0], np.float32), "cond": np.array(cond)}
        np.testing.assert_allclose(_ort(path, feeds)[0], _ort(unnamed, feeds)[0])


# ------------------------------------------------------------ GroupNormalization-18

def _group_norm_18(scale_as_input=False, channels=4):
    rng = np.random.default_rng(3)
    scale = rng.standard_normal(2).astype(np.float32)
    bias = rng.standard_normal(2).astype(np.float32)
    x_shape = [1, channels, 3, 3]
    inputs = [_info("x", x_shape)]
    inits = [numpy_helper.from_array(bias, "b")]
    feeds = {"x": rng.standard_normal((1, 4, 3, 3)).astype(np.float32)}
    if scale_as_input:
        inputs.append(_info("s", [2]))
        feeds["s"] = scale
    else:
        inits.append(numpy_helper.from_array(scale, "s"))
    model = _model([helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"],
                                     num_groups=2, name="gn")],
                   inputs, [_info("y", x_shape)], 18, inits)
    model.ir_version = 8
    return model, feeds


@pytest.mark.parametrize("scale_as_input,channels", [(False, 4), (True, 4), (False, "C")])
def test_group_norm_18_exports_to_opset_21_per_channel(scale_as_input, channels, tmp_path):
    model, feeds = _group_norm_18(scale_as_input, channels)
    want = _ort(model, feeds)
    imported = from_onnx(model)
    np.testing.assert_allclose(Session(imported).run(["y"], feeds)[0], want[0],
                               rtol=1e-5, atol=1e-5)
    path = str(tmp_path / "gn21.onnx")
    exported = to_onnx(imported, path, opset=21)
    np.testing.assert_allclose(_ort(path, feeds)[0], want[0], rtol=1e-5, atol=1e-5)
    if channels == 4:  # a constant with known channels is folded, not computed
        inits = {t.name: t for t in exported.graph.initializer}
        gn = next(n for n in exported.graph.node if n.op_type == "GroupNormalization")
        assert list(inits[gn.input[2]].dims) == [4]
        assert "b" not in inits


def test_group_norm_18_at_its_own_opset_says_which_opset_to_choose():
    model, _ = _group_norm_18()
    with pytest.raises(ConversionError, match=r"opset=21"):
        to_onnx(from_onnx(model))


# ------------------------------------------------------- omitted-output placeholders

def test_real_tensor_named_like_an_omitted_output_keeps_its_name(tmp_path):
    name = OMITTED_OUTPUT_PREFIX + "relu_0"
    model = _model([helper.make_node("Relu", ["x"], [name], name="r"),
                    helper.make_node("Neg", [name], ["y"], name="n")],
                   [_info("x", [2])], [_info("y", [2])], 17)
    _check_all_ways(model, {"x": np.array([-1.0, 2.0], np.float32)}, tmp_path)
    assert to_onnx(from_onnx(model)).graph.node[0].output[0] == name


def test_unread_tensor_named_like_an_omitted_output_on_a_required_output(tmp_path):
    # read by nothing, yet Relu's only output cannot be omitted: it keeps its name
    name = OMITTED_OUTPUT_PREFIX + "r_0"
    model = _model([helper.make_node("Relu", ["x"], [name], name="r"),
                    helper.make_node("Neg", ["x"], ["y"], name="n")],
                   [_info("x", [2])], [_info("y", [2])], 17)
    _check_all_ways(model, {"x": np.array([-1.0, 2.0], np.float32)}, tmp_path)
    assert to_onnx(from_onnx(model)).graph.node[0].output[0] == name


def test_omitted_output_is_still_written_as_empty(tmp_path):
    rng = np.random.default_rng(4)
    w = numpy_helper.from_array(rng.standard_normal((1, 12, 2)).astype(np.float32), "W")
    r = numpy_helper.from_array(rng.standard_normal((1, 12, 3)).astype(np.float32), "R")
    model = _model([helper.make_node("LSTM", ["x", "W", "R"], ["", "yh"], hidden_size=3,
                                     name="lstm")],
                   [_info("x", [4, 1, 2])], [_info("yh", [1, 1, 3])], 17, [w, r])
    _check_all_ways(model, {"x": rng.standard_normal((4, 1, 2)).astype(np.float32)},
                    tmp_path)
    assert list(to_onnx(from_onnx(model)).graph.node[0].output) == ["", "yh"]

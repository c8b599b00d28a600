"""Shape and indexing findings of an audit against onnxruntime: ScatterND updates of the
wrong shape (numpy broadcast them), Trilu with an int64 k near its limits (numpy
overflowed), and operands the spec forbids that were accepted silently (Split with both
sizes and num_outputs, OneHot values not of two elements, Resize with both scales and
sizes or a zero scale, Expand/Tile/ConstantOfShape shape operands that are not 1-D).

Each refusal is checked against onnxruntime refusing the same model; where a case runs,
onegraph's result is compared with onnxruntime's. Models are built twice where it
matters: with the inputs' shapes declared (inference can refuse while importing) and
with them left unknown (the kernel must refuse at run time).
"""

from __future__ import annotations

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import from_onnx

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto as T, helper as h  # noqa: E402

from .single_node import feeds_model, run_onnxruntime  # noqa: E402

I64_MAX, I64_MIN = np.iinfo(np.int64).max, np.iinfo(np.int64).min


def _onegraph(model, feeds):
    return og.Session(from_onnx(model)).run("y", feeds)


def _unshaped(model):
    """`model` with its graph inputs' shapes left unknown, so that nothing is refused
    while importing and the kernel itself meets the inputs."""
    for vi in model.graph.input:
        vi.type.tensor_type.ClearField("shape")
    return model


def _re_list(values):
    """A list as it prints, escaped for a regular expression."""
    return str(values).replace("[", r"\[").replace("]", r"\]")


def _refused_by_both(model, feeds, error, message, oracle=True):
    """onnxruntime refuses `model` (unless not `oracle`), and onegraph raises `error`
    matching `message` (while importing or when running)."""
    if oracle:
        with pytest.raises(Exception):  # the oracle refuses it too
            run_onnxruntime(model, feeds)
    with pytest.raises(error, match=message):
        _onegraph(model, feeds)


# --------------------------------------------------------------------------- ScatterND

_SCATTER_ND_BAD = [
    # data (3, 2), one index tuple of length 1: updates must be (1, 2)
    ((3, 2), [[0]], (2,), r"updates must have shape \[1, 2\] .*got \[2\]"),
    # two tuples: updates (1, 2) would be broadcast over both rows
    ((3, 2), [[0], [1]], (1, 2), r"updates must have shape \[2, 2\] .*got \[1, 2\]"),
    # full-length tuples address elements: updates (2,), not (2, 1)
    ((3, 2), [[0, 1], [2, 0]], (2, 1), r"updates must have shape \[2\] .*got \[2, 1\]"),
    # a scalar update broadcast to a slice
    ((3, 2), [[1]], (), r"updates must have shape \[1, 2\] .*got \[\]"),
    # tuples longer than data's rank
    ((3, 2), [[0, 1, 0]], (1,), r"indices \[1, 3\] address 3 dims; data \[3, 2\] has 2"),
]


@pytest.mark.parametrize("unknown_shapes", [False, True], ids=["declared", "unknown"])
@pytest.mark.parametrize("data_shape,indices,updates_shape,message", _SCATTER_ND_BAD)
def test_scatter_nd_refuses_updates_of_another_shape(data_shape, indices, updates_shape,
                                                     message, unknown_shapes):
    feeds = {"d": np.zeros(data_shape, np.float32), "i": np.array(indices, np.int64),
             "u": np.full(updates_shape, 7, np.float32)}
    model = feeds_model("ScatterND", feeds, 18)
    if unknown_shapes:
        model = _unshaped(model)
    _refused_by_both(model, feeds, og.errors.ShapeError, "ScatterND: " + message)


@pytest.mark.parametrize("reduction", ["none", "add", "max"])
@pytest.mark.parametrize("indices,updates", [
    ([[0]], [[7, 8]]), ([[2], [0]], [[1, 2], [3, 4]]), ([[0, 1], [2, 0]], [5, 6]),
    ([[[1], [2]]], [[[1, 2], [3, 4]]]),
], ids=["row", "rows", "elements", "batched"])
def test_scatter_nd_of_the_right_shape_matches_onnxruntime(indices, updates, reduction):
    feeds = {"d": np.arange(6, dtype=np.float32).reshape(3, 2),
             "i": np.array(indices, np.int64), "u": np.array(updates, np.float32)}
    model = feeds_model("ScatterND", feeds, 18, reduction=reduction)
    np.testing.assert_array_equal(_onegraph(model, feeds), run_onnxruntime(model, feeds))


# --------------------------------------------------------------------------- Trilu

@pytest.mark.parametrize("k", [I64_MIN, I64_MIN + 1, -7, -1, 0, 2, 7, I64_MAX - 1, I64_MAX])
@pytest.mark.parametrize("upper", [0, 1])
def test_trilu_takes_any_int64_k(k, upper):
    feeds = {"x": np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4),
             "k": np.array(k, np.int64)}
    model = feeds_model("Trilu", feeds, 14, upper=upper)
    got, want = _onegraph(model, feeds), run_onnxruntime(model, feeds)
    np.testing.assert_array_equal(got, want)
    if k == I64_MIN:  # the spec's extremes: all kept, or all zeroed
        np.testing.assert_array_equal(got, feeds["x"] if upper else 0 * feeds["x"])


# --------------------------------------------------------------------------- Split

def _split_model(opset, length, outputs=2, sizes=None, sizes_fed=False, **attrs):
    """A Split of a float vector "x" along axis 0 into outputs y0, y1, ...; `sizes`
    (the `split` input "s") an initializer, or a graph input of unknown shape when
    `sizes_fed`."""
    inputs = ["x"] + (["s"] if sizes is not None else [])
    node = h.make_node("Split", inputs, [f"y{j}" for j in range(outputs)], axis=0, **attrs)
    fed = [h.make_tensor_value_info("s", T.INT64, None)] if sizes_fed else []
    inits = [] if sizes is None or sizes_fed else \
        [h.make_tensor("s", T.INT64, [len(sizes)], sizes)]
    graph = h.make_graph([node], "split",
                         [h.make_tensor_value_info("x", T.FLOAT, [length])] + fed,
                         [h.make_tensor_value_info(f"y{j}", T.FLOAT, None)
                          for j in range(outputs)], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("sizes_fed", [False, True], ids=["constant", "fed"])
def test_split_refuses_both_sizes_and_num_outputs(sizes_fed):
    feeds = {"x": np.arange(6, dtype=np.float32)}
    if sizes_fed:
        feeds["s"] = np.array([3, 3], np.int64)
    model = _split_model(18, 6, sizes=[3, 3], sizes_fed=sizes_fed, num_outputs=2)
    with pytest.raises(Exception):  # the oracle refuses it too
        run_onnxruntime(model, feeds)
    with pytest.raises(og.errors.OpAttributeError, match="Split: give either the `split` "
                       r"sizes or the num_outputs attribute \(2\), not both"):
        og.Session(from_onnx(model)).run(["y0", "y1"], feeds)


def test_split_before_opset_18_of_an_axis_of_unknown_length_imports():
    """(review: the unknown length, stored as -1, was refused as not dividing)"""
    from onnx import TensorProto, helper

    node = helper.make_node("Split", ["x"], ["a", "b"], axis=0)
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 4])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in "ab"])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    a, b = og.Session(from_onnx(model)).run(["a", "b"], {"x": x})
    np.testing.assert_array_equal(a, x[:1])
    np.testing.assert_array_equal(b, x[1:])


@pytest.mark.parametrize("opset", [11, 13])
def test_split_before_opset_18_refuses_an_uneven_equal_split(opset):
    """(kernels see no opset: the importer refuses it when the length is known)"""
    feeds = {"x": np.arange(5, dtype=np.float32)}
    model = _split_model(opset, 5)
    with pytest.raises(Exception):  # onnxruntime: "The input is not evenly splittable"
        run_onnxruntime(model, feeds)
    with pytest.raises(og.ConversionError, match="splits into equal parts, but axis 0 of "
                                                 "length 5 does not divide into 2"):
        from_onnx(model)


# --------------------------------------------------------------------------- OneHot

@pytest.mark.parametrize("unknown_shapes", [False, True], ids=["declared", "unknown"])
@pytest.mark.parametrize("values", [[0, 1, 2], [5], [[0], [1]], [[0, 1]], 3],
                         ids=["three", "one", "2x1", "1x2", "scalar"])
def test_one_hot_refuses_values_not_of_two_elements(values, unknown_shapes):
    feeds = {"i": np.array([0, 2], np.int64), "d": np.array(3, np.int64),
             "v": np.array(values, np.float32)}
    model = feeds_model("OneHot", feeds, 11, np.float32)
    if unknown_shapes:
        model = _unshaped(model)
    shape = list(np.shape(values))
    _refused_by_both(model, feeds, og.errors.ShapeError,
                     rf"OneHot: values must be a 1-D tensor of two elements "
                     rf"\[off_value, on_value\], got shape {_re_list(shape)}")


def test_one_hot_with_two_values_matches_onnxruntime():
    feeds = {"i": np.array([[0, 2], [-1, 5]], np.int64), "d": np.array([3], np.int64),
             "v": np.array([-1, 4], np.float32)}
    model = feeds_model("OneHot", feeds, 11, np.float32, axis=0)
    np.testing.assert_array_equal(_onegraph(model, feeds), run_onnxruntime(model, feeds))


# --------------------------------------------------------------------------- Resize

_ROI = np.array([], np.float32)


@pytest.mark.parametrize("unknown_shapes", [False, True], ids=["declared", "unknown"])
def test_resize_refuses_both_scales_and_sizes(unknown_shapes):
    feeds = {"x": np.ones((1, 1, 2, 2), np.float32), "r": _ROI,
             "s": np.array([1, 1, 2, 2], np.float32), "z": np.array([1, 1, 4, 4], np.int64)}
    model = feeds_model("Resize", feeds, 19)
    if unknown_shapes:
        model = _unshaped(model)
    _refused_by_both(model, feeds, og.errors.ShapeError,
                     "Resize: give either scales or sizes, not both")


@pytest.mark.parametrize("scales", [[1, 1, 0, 1], [1, 1, 2, 0]])
def test_resize_refuses_a_zero_scale(scales):
    feeds = {"x": np.ones((1, 1, 2, 2), np.float32), "r": _ROI,
             "s": np.array(scales, np.float32)}
    _refused_by_both(_unshaped(feeds_model("Resize", feeds, 19)), feeds,
                     og.errors.ShapeError,
                     "Resize: scales must be finite and greater than 0")


@pytest.mark.parametrize("given", ["sizes", "scales", "small_scale"])
def test_resize_with_one_of_scales_and_sizes_matches_onnxruntime(given):
    """An empty tensor stands for the one not given (and a scale that leaves an axis
    empty, 0.1 of 2, is still a scale above 0)."""
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    if given == "sizes":
        inits = {"r": _ROI, "s": np.array([], np.float32),
                 "z": np.array([1, 1, 3, 5], np.int64)}
    else:
        s = [1, 1, 2, 1.5] if given == "scales" else [1, 1, 0.1, 1]
        inits = {"r": _ROI, "s": np.array(s, np.float32)}
    for as_inputs in (False, True):  # folded by inference, or run by the kernel
        feeds = dict({"x": x}, **inits) if as_inputs else {"x": x}
        model = feeds_model("Resize", feeds, 19, initializers=None if as_inputs else inits,
                            mode="linear")
        if as_inputs:
            model = _unshaped(model)
        np.testing.assert_allclose(_onegraph(model, feeds), run_onnxruntime(model, feeds),
                                   rtol=1e-6)


# --------------------------------------------------------------------------- 1-D operands

_NOT_1D = {"2-D": [[2, 3]], "0-D": 3}


@pytest.mark.parametrize("unknown_shapes", [False, True], ids=["declared", "unknown"])
@pytest.mark.parametrize("rank", list(_NOT_1D))
@pytest.mark.parametrize("op_type,x,name", [
    ("Expand", np.ones((1,), np.float32), "shape"),
    ("Tile", np.ones((2, 2), np.float32), "repeats"),
    ("ConstantOfShape", None, r"input \(the shape\)"),
])
def test_shape_operands_must_be_1d(op_type, x, name, rank, unknown_shapes):
    if (op_type, rank) == ("Expand", "0-D"):
        pytest.skip("Expand takes a scalar shape (see the test below)")
    operand = np.array(_NOT_1D[rank], np.int64)
    feeds = ({} if x is None else {"x": x})
    feeds["s"] = operand
    model = feeds_model(op_type, feeds, 13, np.float32)
    if unknown_shapes:
        model = _unshaped(model)
    # onnxruntime's shape inference refuses these; its Expand and ConstantOfShape
    # kernels, which meet them when the shapes are unknown, flatten them instead
    _refused_by_both(model, feeds, og.errors.ShapeError,
                     rf"{op_type}: {name} must be a 1-D tensor, got shape "
                     rf"{_re_list(list(operand.shape))}",
                     oracle=not unknown_shapes or op_type == "Tile")


def test_expand_takes_a_scalar_shape_as_onnxruntime_does():
    """(review: refused as not 1-D, where onnxruntime and onnx's full check take it)"""
    from onnx import TensorProto, helper, numpy_helper

    node = helper.make_node("Expand", ["x", "s"], ["y"])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(3, np.int64), "s")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    feeds = {"x": np.ones(1, np.float32)}
    np.testing.assert_array_equal(_onegraph(model, feeds), run_onnxruntime(model, feeds))


@pytest.mark.parametrize("op_type,x,operand", [
    ("Expand", np.arange(3, dtype=np.float32), [2, 1]),
    ("Expand", np.arange(3, dtype=np.float32), []),
    ("Tile", np.arange(6, dtype=np.float32).reshape(2, 3), [2, 1]),
    ("Tile", np.array(4, np.float32), []),
    ("ConstantOfShape", None, [2, 3]),
    ("ConstantOfShape", None, []),
], ids=["expand", "expand-empty", "tile", "tile-scalar", "fill", "fill-scalar"])
def test_1d_shape_operands_still_match_onnxruntime(op_type, x, operand):
    feeds = ({} if x is None else {"x": x})
    feeds["s"] = np.array(operand, np.int64)
    model = _unshaped(feeds_model(op_type, feeds, 13, np.float32))
    np.testing.assert_array_equal(_onegraph(model, feeds), run_onnxruntime(model, feeds))


def test_inference_refuses_what_the_kernels_refuse():
    """Graph building runs inference: shapes known then are refused then."""
    from onegraph.format import Graph
    from onegraph.ops.inference import annotate_graph

    f, i = "float32", "int64"
    cases = [
        ("ScatterND", [("d", f, [3, 2]), ("i", i, [1, 1]), ("u", f, [2])], {},
         r"updates must have shape \[1, 2\]"),
        ("OneHot", [("i", i, [2]), ("d", i, []), ("v", f, [3])], {}, "two elements"),
        ("Tile", [("x", f, [2, 2]), ("r", i, [1, 2])], {}, "repeats must be a 1-D tensor"),
        ("Split", [("x", f, [6]), ("s", i, [2])], {"num_outputs": 2}, "not both"),
    ]
    for op_type, inputs, attrs, message in cases:
        g = Graph("g")
        ids = [g.add_input(name, dtype, shape) for name, dtype, shape in inputs]
        outs = ["y0", "y1"] if op_type == "Split" else ["y"]
        g.add_node(op_type, ids, outs, attrs)
        g.outputs.append(g.find_tensor(outs[0]))
        with pytest.raises(og.OneGraphError, match=message):
            annotate_graph(g)

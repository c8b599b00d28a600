"""Loop and Scan variants beyond the node tests, checked against onnxruntime."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from onegraph.convert import from_onnx
from onegraph.train.session import Session


def _both(model, feeds):
    ours = Session(from_onnx(model)).run([o.name for o in model.graph.output], feeds)
    ref = ort.InferenceSession(model.SerializeToString(),
                               providers=["CPUExecutionProvider"]).run(None, feeds)
    return ours, ref


@pytest.mark.parametrize("in_dir,out_dir,in_axis,out_axis",
                         [(0, 0, 0, 0), (1, 0, 1, 0), (0, 1, 0, 1), (1, 1, -1, -1)])
def test_scan_axes_and_directions(in_dir, out_dir, in_axis, out_axis):
    s_in = helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [2])
    x_in = helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [2])
    s_out = helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [2])
    y_out = helper.make_tensor_value_info("y_out", TensorProto.FLOAT, [2])
    body = helper.make_graph([helper.make_node("Add", ["s_in", "x_in"], ["s_out"]),
                              helper.make_node("Mul", ["s_out", "x_in"], ["y_out"])],
                             "body", [s_in, x_in], [s_out, y_out])
    node = helper.make_node("Scan", ["init", "xs"], ["final", "ys"], body=body,
                            num_scan_inputs=1, scan_input_directions=[in_dir],
                            scan_output_directions=[out_dir], scan_input_axes=[in_axis],
                            scan_output_axes=[out_axis])
    xs_shape = [4, 2] if in_axis == 0 else [2, 4]
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("init", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("xs", TensorProto.FLOAT, xs_shape)],
        [helper.make_tensor_value_info("final", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("ys", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    rng = np.random.default_rng(0)
    feeds = {"init": rng.standard_normal(2).astype(np.float32),
             "xs": rng.standard_normal(xs_shape).astype(np.float32)}
    ours, ref = _both(model, feeds)
    for a, b in zip(ours, ref, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize("trips,cond", [(5, True), (0, True), (5, False), (None, True)])
def test_loop_trip_count_cond_and_scan_outputs(trips, cond):
    """Loop: stops at M, or when the body's cond turns false (after i >= 3)."""
    i_in = helper.make_tensor_value_info("i", TensorProto.INT64, [])
    c_in = helper.make_tensor_value_info("c_in", TensorProto.BOOL, [])
    v_in = helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [2])
    three = helper.make_tensor("three", TensorProto.INT64, [], [3])
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
         helper.make_node("Add", ["v_in", "fi"], ["v_out"]),
         helper.make_node("Less", ["i", "three"], ["c_out"]),
         helper.make_node("Identity", ["v_out"], ["scan_out"])],
        "body", [i_in, c_in, v_in],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("scan_out", TensorProto.FLOAT, [2])],
        initializer=[three])
    inputs = ["M" if trips is not None else "", "cond", "v0"]
    node = helper.make_node("Loop", inputs, ["v_final", "stacked"], body=body)
    graph_inputs = [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                    helper.make_tensor_value_info("v0", TensorProto.FLOAT, [2])]
    feeds = {"cond": np.array(cond), "v0": np.array([1, 2], np.float32)}
    if trips is not None:
        graph_inputs.append(helper.make_tensor_value_info("M", TensorProto.INT64, []))
        feeds["M"] = np.array(trips, np.int64)
    graph = helper.make_graph(
        [node], "g", graph_inputs,
        [helper.make_tensor_value_info("v_final", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("stacked", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    ours, ref = _both(model, feeds)
    for a, b in zip(ours, ref, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b)


def _sequence_model():
    """seq: sequence of float tensors [?, 3]; opt: optional float tensor; outputs the
    concatenated sequence, its length and whether `opt` holds a value."""
    elem = helper.make_tensor_type_proto(TensorProto.FLOAT, [None, 3])
    seq = helper.make_value_info("seq", helper.make_sequence_type_proto(elem))
    opt = helper.make_value_info("opt", helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [2])))
    nodes = [helper.make_node("ConcatFromSequence", ["seq"], ["cat"], axis=0),
             helper.make_node("SequenceLength", ["seq"], ["n"]),
             helper.make_node("OptionalHasElement", ["opt"], ["has"])]
    outs = [helper.make_tensor_value_info("cat", TensorProto.FLOAT, [None, 3]),
            helper.make_tensor_value_info("n", TensorProto.INT64, []),
            helper.make_tensor_value_info("has", TensorProto.BOOL, [])]
    graph = helper.make_graph(nodes, "seq", [seq, opt], outs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_sequence_and_optional_inputs_keep_their_types():
    """Sequence/optional graph inputs are typed in the IR (element dtype and shape
    under their containers), fed as lists/None, and exported with the same types."""
    from onegraph.convert import to_onnx
    from onegraph.format import Container, DType

    model = _sequence_model()
    og = from_onnx(model)
    t = og.graph.tensors[og.graph.find_tensor("seq")]
    assert t.containers == (Container.SEQUENCE,) and t.dtype is DType.FLOAT32
    assert t.shape == (-1, 3)
    parts = [np.ones((2, 3), np.float32), np.arange(3, dtype=np.float64).reshape(1, 3)]
    cat, n, has = Session(og).run(["cat", "n", "has"], {"seq": parts, "opt": None})
    np.testing.assert_array_equal(cat, np.concatenate(parts).astype(np.float32))
    assert cat.dtype == np.float32 and int(n) == 2 and not bool(has)
    back = to_onnx(og)
    assert [i.type for i in back.graph.input] == [i.type for i in model.graph.input]
    feeds = {"seq": [p.astype(np.float32) for p in parts], "opt": np.zeros(2, np.float32)}
    ref = ort.InferenceSession(back.SerializeToString(),
                               providers=["CPUExecutionProvider"]).run(None, feeds)
    ours = Session(og).run(["cat", "n", "has"], feeds)
    for a, b in zip(ours, ref, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("feeds, match", [
    ({"seq": np.ones((2, 3), np.float32), "opt": None}, r"'seq'.*expects a sequence"),
    ({"seq": [np.ones((2, 4), np.float32)], "opt": None}, r"'seq'.*shape \[2, 4\]"),
    ({"seq": [np.array([["a", "b", "c"]])], "opt": None}, r"'seq'.*dtype"),
    ({"seq": [], "opt": np.ones(3, np.float32)}, r"'opt'.*shape \[3\]"),
])
def test_sequence_feed_errors(feeds, match):
    """Feeds that do not fit a sequence/optional input's type are named ShapeErrors."""
    from onegraph.errors import ShapeError

    with pytest.raises(ShapeError, match=match):
        Session(from_onnx(_sequence_model())).run(["n"], feeds)


def test_info_shows_container_types():
    """`onegraph info` names a sequence/optional input's type with its wrappers."""
    from onegraph.info import describe, format_text

    text = format_text(describe(from_onnx(_sequence_model())))
    assert "seq: sequence<float32[?, 3]>, opt: optional<float32[2]>" in text


def _sequence_map_model():
    """SequenceMap adding the matching elements of two float sequences."""
    elem = helper.make_tensor_type_proto(TensorProto.FLOAT, None)
    seq_t = helper.make_sequence_type_proto(elem)
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, None)
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, None)
    s = helper.make_tensor_value_info("s", TensorProto.FLOAT, None)
    body = helper.make_graph([helper.make_node("Add", ["a", "b"], ["s"])], "add", [a, b], [s])
    node = helper.make_node("SequenceMap", ["x", "y"], ["z"], body=body)
    graph = helper.make_graph([node], "map", [helper.make_value_info("x", seq_t),
                                              helper.make_value_info("y", seq_t)],
                              [helper.make_value_info("z", seq_t)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_sequence_map_pairs_elements_and_checks_lengths():
    from onegraph.errors import ExecutionError

    sess = Session(from_onnx(_sequence_map_model()))
    xs = [np.ones(2, np.float32), np.arange(3, dtype=np.float32)]
    ys = [np.full(2, 2, np.float32), np.ones(3, np.float32)]
    (z,) = sess.run(["z"], {"x": xs, "y": ys})
    assert len(z) == 2
    for got, x, y in zip(z, xs, ys):
        np.testing.assert_array_equal(got, x + y)
    assert sess.run(["z"], {"x": [], "y": []})[0] == []
    with pytest.raises(ExecutionError, match=r"SequenceMap: additional input 1 is a "
                                             r"sequence of 1 for an input sequence of 2"):
        sess.run(["z"], {"x": xs, "y": ys[:1]})


@pytest.mark.parametrize("trips", [0, 1, 3])
def test_loop_body_declaring_a_1d_iteration_number_and_condition(trips):
    """tf2onnx's CropAndResize Loop body declares its iteration number int64[1] and
    slices with it: onnxruntime feeds such a body a one-element 1-D tensor, so the
    Session must too (Slice refuses 0-D starts)."""
    one = helper.make_tensor("one", TensorProto.INT64, [1], [1])
    body = helper.make_graph(
        [helper.make_node("Add", ["i", "one"], ["i1"]),
         helper.make_node("Slice", ["data", "i", "i1"], ["row"]),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, [1]),
                 helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("row", TensorProto.FLOAT, [1, 3])], [one])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "c"], ["rows"], body=body)], "g",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [4, 3]),
         helper.make_tensor_value_info("M", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("rows", TensorProto.FLOAT, [None, 1, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    feeds = {"data": np.arange(12, dtype=np.float32).reshape(4, 3),
             "M": np.array(trips, np.int64), "c": np.array(True)}
    ours, ref = _both(model, feeds)
    assert ours[0].shape == ref[0].shape == (trips, 1, 3)
    np.testing.assert_array_equal(ours[0], ref[0])


@pytest.mark.parametrize("steps", [0, 3])
@pytest.mark.parametrize("typed_outside", [False, True])
def test_loop_carrying_an_untyped_sequence_exports_as_a_sequence(steps, typed_outside):
    """A Loop body whose carried sequence is left untyped (as onnxscript writes it):
    the import types it from its initial value (SequenceEmpty's), so to_onnx writes
    the body's input and output as sequences; it wrote a float tensor before, which
    ONNX's full check refused (found by the onnxscript sweep)."""
    import onnx

    from onegraph.convert import to_onnx

    body = helper.make_graph(
        [helper.make_node("SequenceInsert", ["seq_in", "x"], ["seq_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_empty_tensor_value_info("seq_in")],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_empty_tensor_value_info("seq_out")])
    graph = helper.make_graph(
        [helper.make_node("SequenceEmpty", [], ["empty"], dtype=TensorProto.FLOAT),
         helper.make_node("Loop", ["n", "", "empty"], ["seq"], body=body),
         helper.make_node("SequenceLength", ["seq"], ["count"]),
         helper.make_node("ConcatFromSequence", ["seq"], ["y"], axis=0)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("n", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("count", TensorProto.INT64, []),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [None])])
    if typed_outside:  # the same with the outer values typed by ONNX's inference
        graph.value_info.extend([helper.make_tensor_sequence_value_info(
            name, TensorProto.FLOAT, None) for name in ("empty", "seq")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model, full_check=True)
    feeds = {"x": np.array([1.0, 2.0], np.float32), "n": np.array(steps, np.int64)}
    if steps == 0:  # ConcatFromSequence of an empty sequence: onnxruntime refuses
        model.graph.node.pop()
        model.graph.output.pop()
    ours, ref = _both(model, feeds)
    for a, b in zip(ours, ref):
        np.testing.assert_array_equal(a, b)
    exported = to_onnx(from_onnx(model))
    onnx.checker.check_model(exported, full_check=True)
    (loop,) = [n for n in exported.graph.node if n.op_type == "Loop"]
    assert loop.attribute[0].g.output[1].type.HasField("sequence_type")
    again = ort.InferenceSession(exported.SerializeToString(),
                                 providers=["CPUExecutionProvider"]).run(None, feeds)
    for a, b in zip(again, ref):
        np.testing.assert_array_equal(a, b)


def test_sequence_map_with_an_untyped_body_exports_a_typed_one():
    """A SequenceMap whose body is untyped (as onnxscript writes every body), inside a
    local function (onnxruntime types it when it inlines the function): the import types
    the body's input from the sequence it maps, so the export (the function inlined)
    has a typed body onnxruntime loads; it refused the export's empty body types before
    ("Invalid tensor data type 0"; found by the onnxscript sweep)."""
    import onnx

    from onegraph.convert import to_onnx

    body = helper.make_graph([helper.make_node("ReduceSum", ["t"], ["r"], keepdims=1)],
                             "body", [onnx.ValueInfoProto(name="t")],
                             [onnx.ValueInfoProto(name="r")])
    fn = helper.make_function(
        "custom", "row_sums", ["x"], ["y"],
        [helper.make_node("SplitToSequence", ["x"], ["s"], axis=0),
         helper.make_node("SequenceMap", ["s"], ["m"], body=body),
         helper.make_node("ConcatFromSequence", ["m"], ["y"], axis=0)],
        [helper.make_opsetid("", 18)])
    graph = helper.make_graph(
        [helper.make_node("row_sums", ["x"], ["y"], domain="custom")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 1])])
    model = helper.make_model(graph, functions=[fn], opset_imports=[
        helper.make_opsetid("", 18), helper.make_opsetid("custom", 1)])
    feeds = {"x": np.arange(6, dtype=np.float32).reshape(3, 2)}
    ours, ref = _both(model, feeds)
    np.testing.assert_array_equal(ours[0], ref[0])
    exported = to_onnx(from_onnx(model))
    onnx.checker.check_model(exported, full_check=True)
    again = ort.InferenceSession(exported.SerializeToString(),
                                 providers=["CPUExecutionProvider"]).run(None, feeds)
    np.testing.assert_array_equal(again[0], ref[0])

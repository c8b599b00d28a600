"""Fixes from the control-flow/sequence/optional audit against onnxruntime: each case
once gave a wrong value or a raw error, or was accepted where onnxruntime refuses it;
now it matches onnxruntime (or ONNX's reference) or is refused by name, at run time and,
where the types are known, by inference."""

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as oh

import onegraph as og
from onegraph.convert import from_onnx
from onegraph.errors import ExecutionError, OpAttributeError, ShapeError
from onegraph.ops.inference import infer_graph

from .single_node import run_onnxruntime

F, I64, B = T.FLOAT, T.INT64, T.BOOL
vi = oh.make_tensor_value_info


def _model(nodes, inputs, outputs, opset=18):
    m = oh.make_model(oh.make_graph(nodes, "g", inputs, outputs),
                      opset_imports=[oh.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _run(model, feeds, name=None):
    name = name or model.graph.output[0].name
    return og.Session(from_onnx(model)).run([name], feeds)[0]


def _infer(model):
    return infer_graph(from_onnx(model).graph)


# --------------------------------------------------------------------------- F1 If

def _if_mixed_types():
    then = oh.make_graph([oh.make_node("Identity", ["X"], ["t"])], "then", [],
                         [vi("t", F, [2])])
    other = oh.make_graph([oh.make_node("Cast", ["X"], ["e"], to=I64)], "else", [],
                          [vi("e", I64, [2])])
    return _model([oh.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
                   oh.make_node("Add", ["y", "X"], ["z"])],
                  [vi("c", B, []), vi("X", F, [2])], [vi("z", F, [2])])


@pytest.mark.parametrize("cond", [False, True])
def test_if_branches_of_different_element_types_are_refused_at_run_time(cond):
    feeds = {"c": np.array(cond), "X": np.array([1.5, 2], np.float32)}
    taken, other = ("then_branch", "else_branch") if cond else ("else_branch", "then_branch")
    got, stated = ("float32", "int64") if cond else ("int64", "float32")
    with pytest.raises(ShapeError, match=rf"If: output 0 from {taken} is {got}, but "
                                         rf"{other} states {stated}"):
        _run(_if_mixed_types(), feeds)


def test_if_branches_of_different_element_types_are_refused_by_inference():
    with pytest.raises(ShapeError, match="If: output 0 is float32 in then_branch but int64 "
                                         "in else_branch"):
        _infer(_if_mixed_types())


# --------------------------------------------------------------------------- F2 outer optional

def test_if_branch_reads_an_empty_optional_of_the_outer_graph():
    then = oh.make_graph([oh.make_node("OptionalHasElement", ["o"], ["h"])], "then", [],
                         [vi("h", B, [])])
    other = oh.make_graph([oh.make_node("Not", ["c"], ["h2"])], "else", [],
                          [vi("h2", B, [])])
    opt = oh.make_optional_type_proto(oh.make_tensor_type_proto(F, [2]))
    m = _model([oh.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
               [vi("c", B, []), oh.make_value_info("o", opt)], [vi("y", B, [])])
    feeds = {"c": np.array(True), "o": None}
    got = _run(m, feeds)
    assert got.dtype == np.bool_ and not got
    np.testing.assert_array_equal(got, run_onnxruntime(m, feeds))
    present = {"c": np.array(True), "o": np.ones(2, np.float32)}
    np.testing.assert_array_equal(_run(m, present), run_onnxruntime(m, present))


def test_loop_body_reads_an_empty_optional_made_outside():
    body = oh.make_graph(
        [oh.make_node("Identity", ["cin"], ["cout"]), oh.make_node("Identity", ["v"], ["v2"]),
         oh.make_node("OptionalHasElement", ["o"], ["h"])], "body",
        [vi("i", I64, []), vi("cin", B, []), vi("v", F, [2])],
        [vi("cout", B, []), vi("v2", F, [2]), vi("h", B, [])])
    m = _model([oh.make_node("Optional", [], ["o"], type=oh.make_tensor_type_proto(F, [2])),
                oh.make_node("Loop", ["M", "", "v0"], ["vf", "y"], body=body)],
               [vi("M", I64, []), vi("v0", F, [2])], [vi("vf", F, [2]), vi("y", B, [2])])
    feeds = {"M": np.array(2, np.int64), "v0": np.array([0.5, -1], np.float32)}
    got = _run(m, feeds, "y")
    np.testing.assert_array_equal(got, np.array([False, False]))
    np.testing.assert_array_equal(got, _ort_output(m, feeds, "y"))


def _ort_output(model, feeds, name):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return session.run([name], feeds)[0]


def test_a_graph_input_a_subgraph_reads_must_still_be_fed():
    # None in an outer slot is an empty optional only for a value that can be one
    then = oh.make_graph([oh.make_node("Identity", ["X"], ["t"])], "then", [],
                         [vi("t", F, [2])])
    other = oh.make_graph([oh.make_node("Neg", ["X"], ["e"])], "else", [],
                          [vi("e", F, [2])])
    m = _model([oh.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
               [vi("c", B, []), vi("X", F, [2])], [vi("y", F, [2])])
    with pytest.raises(ExecutionError, match="subgraph refers to 'X', which no enclosing "
                                             "graph defines"):
        _run(m, {"c": np.array(True)})


# ------------------------------------------------------------------- F3-F6 SplitToSequence

def _split(x, split=None, **attrs):
    inputs = [vi("X", F, list(x.shape))]
    feeds = {"X": x}
    if split is not None:
        inputs.append(vi("S", I64, list(split.shape)))
        feeds["S"] = split
    m = _model([oh.make_node("SplitToSequence", ["X"] + (["S"] if split is not None else []),
                             ["s"], **attrs)],
               inputs, [oh.make_tensor_sequence_value_info("s", F, None)], opset=16)
    return m, feeds


@pytest.mark.parametrize("keepdims", [0, 1])
def test_split_to_sequence_of_a_zero_length_axis_without_split_is_empty(keepdims):
    m, feeds = _split(np.zeros((0, 2), np.float32), keepdims=keepdims)
    got = _run(m, feeds)
    assert got == [] and run_onnxruntime(m, feeds) == []


def test_split_to_sequence_of_a_zero_length_axis_in_chunks_of_a_scalar_is_empty():
    m, feeds = _split(np.zeros((0, 2), np.float32), np.array(3, np.int64))
    got = _run(m, feeds)
    assert got == [] and run_onnxruntime(m, feeds) == []
    # a length that is no multiple of the chunk size still ends in a smaller chunk
    m, feeds = _split(np.arange(8, dtype=np.float32).reshape(4, 2), np.array(3, np.int64))
    got, want = _run(m, feeds), run_onnxruntime(m, feeds)
    assert [a.shape for a in got] == [(3, 2), (1, 2)]
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("axis", [2, -3])
def test_split_to_sequence_refuses_an_axis_out_of_range(axis):
    m, feeds = _split(np.zeros((4, 2), np.float32), axis=axis)
    with pytest.raises(OpAttributeError, match=rf"SplitToSequence: axis {axis} out of range "
                                               r"for rank 2"):
        _run(m, feeds)
    with pytest.raises(OpAttributeError, match=rf"axis {axis} out of range for rank 2"):
        _infer(m)


@pytest.mark.parametrize("split, message", [
    (np.array(-1, np.int64), "a scalar split is the size of every chunk and must be "
                             "positive, got -1"),
    (np.array(0, np.int64), "a scalar split is the size of every chunk and must be "
                            "positive, got 0"),
    (np.array([-1, 5], np.int64), r"split sizes must be >= 0, got \[-1, 5\]"),
])
def test_split_to_sequence_refuses_negative_split_sizes(split, message):
    m, feeds = _split(np.zeros((4, 2), np.float32), split)
    with pytest.raises(ShapeError, match=f"SplitToSequence: {message}"):
        _run(m, feeds)


# --------------------------------------------------------------------------- F7 SequenceInsert

def test_sequence_insert_refuses_a_tensor_of_another_type_than_the_elements():
    m = _model([oh.make_node("SequenceConstruct", ["A"], ["s"]),
                oh.make_node("SequenceInsert", ["s", "V"], ["s2"]),
                oh.make_node("ConcatFromSequence", ["s2"], ["y"], axis=0)],
               [vi("A", F, [2]), vi("V", I64, [3])], [vi("y", F, [5])], opset=16)
    feeds = {"A": np.ones(2, np.float32), "V": np.arange(3, dtype=np.int64)}
    with pytest.raises(ShapeError, match="SequenceInsert: the sequence holds float32 "
                                         "tensors, the tensor to insert is int64"):
        _run(m, feeds)
    with pytest.raises(ShapeError, match="SequenceInsert: the sequence holds float32"):
        _infer(m)


def _empty_then_insert(elem):
    return _model([oh.make_node("SequenceEmpty", [], ["s"], dtype=I64),
                   oh.make_node("SequenceInsert", ["s", "V"], ["s2"]),
                   oh.make_node("ConcatFromSequence", ["s2"], ["y"], axis=0)],
                  [vi("V", elem, [3])], [vi("y", I64, [3])], opset=16)


def test_sequence_empty_carries_its_dtype_into_inference():
    with pytest.raises(ShapeError, match="SequenceInsert: the sequence holds int64 tensors, "
                                         "the tensor to insert is float32"):
        _infer(_empty_then_insert(F))
    m = _empty_then_insert(I64)
    g = from_onnx(m).graph
    infos = infer_graph(g)
    assert infos[g.find_tensor("y")].dtype == np.int64
    feeds = {"V": np.arange(3, dtype=np.int64)}
    np.testing.assert_array_equal(_run(m, feeds), run_onnxruntime(m, feeds))


# --------------------------------------------------------------------------- F8, F10 Loop

def _loop(body_nodes, cond_type=B, carried_type=F):
    body = oh.make_graph(body_nodes, "body",
                         [vi("i", I64, []), vi("cin", B, []), vi("v", F, [2])],
                         [vi("cout", cond_type, []), vi("v2", carried_type, [2])])
    return _model([oh.make_node("Loop", ["M", "", "v0"], ["vf"], body=body)],
                  [vi("M", I64, []), vi("v0", F, [2])], [vi("vf", F, [2])])


_LOOP_FEEDS = {"M": np.array(2, np.int64), "v0": np.array([0.5, -1], np.float32)}


def test_loop_body_must_keep_the_type_of_a_loop_carried_value():
    m = _loop([oh.make_node("Cast", ["v"], ["v2"], to=I64),
               oh.make_node("Identity", ["cin"], ["cout"])], carried_type=I64)
    message = ("Loop: the body turns loop-carried value 0 from float32 into int64; it must "
               "keep its element type")
    with pytest.raises(ShapeError, match=message):
        _run(m, _LOOP_FEEDS)
    with pytest.raises(ShapeError, match=message):
        _infer(m)


def test_loop_body_condition_output_must_be_bool():
    m = _loop([oh.make_node("Cast", ["cin"], ["cout"], to=F),
               oh.make_node("Identity", ["v"], ["v2"])], cond_type=F)
    message = r"Loop: the body's condition output \(output 0\) must be bool, got float32"
    with pytest.raises(ShapeError, match=message):
        _run(m, _LOOP_FEEDS)
    with pytest.raises(ShapeError, match=message):
        _infer(m)
    fine = _loop([oh.make_node("Identity", ["cin"], ["cout"]),
                  oh.make_node("Identity", ["v"], ["v2"])])
    np.testing.assert_array_equal(_run(fine, _LOOP_FEEDS), run_onnxruntime(fine, _LOOP_FEEDS))


# --------------------------------------------------------------------------- F9 Scan

def test_scan_body_must_keep_the_type_of_a_state_variable():
    body = oh.make_graph([oh.make_node("Cast", ["s"], ["s2"], to=I64),
                          oh.make_node("Identity", ["x"], ["y"])], "body",
                         [vi("s", F, [2]), vi("x", F, [2])],
                         [vi("s2", I64, [2]), vi("y", F, [2])])
    m = _model([oh.make_node("Scan", ["S", "X"], ["SF", "Y"], body=body, num_scan_inputs=1)],
               [vi("S", F, [2]), vi("X", F, [3, 2])], [vi("SF", F, [2]), vi("Y", F, [3, 2])],
               opset=16)
    feeds = {"S": np.full(2, 1.5, np.float32), "X": np.ones((3, 2), np.float32)}
    message = ("Scan: the body turns state variable 0 from float32 into int64; it must keep "
               "its element type")
    with pytest.raises(ShapeError, match=message):
        _run(m, feeds)
    with pytest.raises(ShapeError, match=message):
        _infer(m)


# --------------------------------------------------------------------------- F11 Optional

def test_optional_needs_an_input_or_a_type():
    m = _model([oh.make_node("Optional", [], ["o"]),
                oh.make_node("OptionalHasElement", ["o"], ["h"])], [], [vi("h", B, [])])
    message = "Optional: needs an input or the type attribute"
    with pytest.raises(OpAttributeError, match=message):
        _run(m, {})
    with pytest.raises(OpAttributeError, match=message):
        _infer(m)
    typed = _model([oh.make_node("Optional", [], ["o"], type=oh.make_tensor_type_proto(F, [2])),
                    oh.make_node("OptionalHasElement", ["o"], ["h"])], [], [vi("h", B, [])])
    got = _run(typed, {})
    assert not got
    np.testing.assert_array_equal(got, run_onnxruntime(typed, {}))


def test_zero_trip_loop_keeps_the_rank_of_a_scan_output_with_value_dependent_dims():
    """A Loop run 0 times whose body output's dims depend on values (NonZero of a large
    outer tensor: (2, ?)) stacks an empty output of that rank, the unknown dims 0, as
    onnxruntime gives it; it was shape (0,), losing the rank."""
    nz = oh.make_tensor_value_info("nz", I64, None)
    nz.type.tensor_type.ClearField("shape")
    body = oh.make_graph(
        [oh.make_node("NonZero", ["X"], ["nz"]), oh.make_node("Identity", ["c"], ["c_out"])],
        "body", [vi("i", I64, []), vi("c", B, [])], [vi("c_out", B, []), nz])
    model = _model([oh.make_node("Loop", ["M", ""], ["scan"], body=body)],
                   [vi("M", I64, []), vi("X", F, [10, 10])], [vi("scan", I64, None)])
    x = (np.arange(100).reshape(10, 10) % 3).astype(np.float32)
    for trips in (0, 2):
        feeds = {"M": np.array(trips, np.int64), "X": x}
        want = _ort_output(model, feeds, "scan")
        got = _run(model, feeds)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)

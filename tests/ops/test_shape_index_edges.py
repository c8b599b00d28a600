"""Shape and indexing edge cases a sweep against onnxruntime found: GatherElements
with indices smaller than the data, Slice's clamping for negative steps, and inputs
onnxruntime refuses that onegraph used to accept silently (now clear errors)."""

from __future__ import annotations

import numpy as np
import pytest

import onegraph as og
from onegraph.convert import from_onnx

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from .single_node import feeds_model, run_onnxruntime  # noqa: E402

I64_MAX, I64_MIN = np.iinfo(np.int64).max, np.iinfo(np.int64).min


def _onegraph(model, feeds):
    return og.Session(from_onnx(model)).run("y", feeds)


@pytest.mark.parametrize("axis,indices", [
    (0, [[2]]), (1, [[0, 3], [1, 1]]), (1, np.zeros((0, 4), np.int64)),
    (0, [[2, -1], [0, 1], [-3, 2]]), (-1, [[3], [-4]]),
], ids=["corner", "smaller-off-axis", "empty", "negative", "negative-axis"])
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
def test_gather_elements_output_has_the_indices_shape(axis, indices, index_dtype):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    feeds = {"x": x, "i": np.asarray(indices, index_dtype)}
    model = feeds_model("GatherElements", feeds, 13, axis=axis)
    got, want = _onegraph(model, feeds), run_onnxruntime(model, feeds)
    assert got.shape == want.shape == feeds["i"].shape
    np.testing.assert_array_equal(got, want)


def test_gather_elements_refuses_indices_larger_than_the_data():
    feeds = {"x": np.zeros((2, 2), np.float32), "i": np.zeros((3, 2), np.int64)}
    with pytest.raises(og.OneGraphError, match="GatherElements: indices"):
        _onegraph(feeds_model("GatherElements", feeds, 13, axis=1), feeds)


@pytest.mark.parametrize("start,end,step", [
    (-6, -7, -1), (-100, I64_MIN, -1), (-1, -100, -2), (10, -10, -1), (2, -6, -1),
    (4, 0, -1), (-2, 1, -3), (-6, 3, 1), (1, 100, 2), (-100, 2, 1),
])
def test_slice_clamps_like_the_spec(start, end, step):
    x = np.arange(5, dtype=np.float32)
    feeds = {"x": x}
    consts = {"s": np.array([start], np.int64), "e": np.array([end], np.int64),
              "a": np.array([0], np.int64), "t": np.array([step], np.int64)}
    model = feeds_model("Slice", feeds, 13, initializers=consts)
    got, want = _onegraph(model, feeds), run_onnxruntime(model, feeds)
    np.testing.assert_array_equal(got, want)
    as_inputs = dict(feeds, **consts)    # not folded: the kernel rather than inference
    model = feeds_model("Slice", as_inputs, 13)
    np.testing.assert_array_equal(_onegraph(model, as_inputs), want)


@pytest.mark.parametrize("op_type,feeds,attrs,message", [
    ("Trilu", {"x": np.zeros(3, np.float32)}, {}, "rank 1; it needs at least 2"),
    ("Flatten", {"x": np.zeros((3, 4), np.float32)}, {"axis": 3}, r"axis 3 outside \[-2, 2\]"),
    ("Reshape", {"x": np.zeros((0, 4), np.float32), "s": np.array([0, -1], np.int64)}, {},
     "cannot infer the -1"),
    ("Reshape", {"x": np.zeros((2, 4), np.float32), "s": np.array([0, -1], np.int64)},
     {"allowzero": 1}, "both 0 and -1"),
    ("Pad", {"x": np.zeros(3, np.float32), "p": np.array([3, 0], np.int64)},
     {"mode": "reflect"}, r"reflect padding of 3 on axis 0 of size 3 \(at most 2\)"),
    ("Pad", {"x": np.zeros(3, np.float32), "p": np.array([2, -1], np.int64)},
     {"mode": "reflect"}, "at most 1"),
    ("Pad", {"x": np.zeros(0, np.float32), "p": np.array([1, 0], np.int64)},
     {"mode": "edge"}, "at most 0"),
    ("Tile", {"x": np.zeros((2, 2), np.float32), "r": np.array([2], np.int64)}, {},
     "one non-negative count per dim"),
    ("OneHot", {"i": np.array([0, 1], np.int64), "d": np.array(0, np.int64),
                "v": np.array([0, 1], np.float32)}, {}, "depth 0"),
    ("GatherND", {"x": np.zeros((2, 2), np.float32), "i": np.zeros((1, 3), np.int64)}, {},
     "address 3 dims"),
    ("Range", {"a": np.array(0, np.int64), "b": np.array(5, np.int64),
               "c": np.array(0, np.int64)}, {}, "delta is 0"),
    ("ReverseSequence", {"x": np.zeros((3, 2), np.float32), "l": np.array([4, 1], np.int64)},
     {}, r"sequence_lens\[0\] = 4 is outside \[0, 3\]"),
    ("Reshape", {"x": np.zeros((2, 3), np.float32), "s": np.array([4, 4], np.int64)}, {},
     r"cannot reshape \[2, 3\] \(6 values\) to \[4, 4\] \(16 values\)"),
    ("Reshape", {"x": np.zeros((2, 3), np.float32), "s": np.array([4, -1], np.int64)}, {},
     "6 is not a multiple of 4"),
    ("Transpose", {"x": np.zeros((2, 3), np.float32)}, {"perm": [0, 0]},
     r"perm \[0, 0\] is not a permutation of the 2 axes"),
    ("Softmax", {"x": np.zeros((2, 3), np.float32)}, {"axis": 2},
     "axis 2 out of range for rank 2"),
], ids=lambda v: v if isinstance(v, str) and v[0].isupper() else "")
def test_inputs_onnxruntime_refuses_raise_a_clear_error(op_type, feeds, attrs, message):
    out = np.float32 if op_type in ("OneHot",) else None
    model = feeds_model(op_type, feeds, 19, out, **attrs)
    with pytest.raises(Exception):  # the oracle refuses them too
        run_onnxruntime(model, feeds)
    with pytest.raises(og.OneGraphError, match=message):
        _onegraph(model, feeds)


@pytest.mark.parametrize("mode,pads", [("wrap", [4, 0]), ("wrap", [7, 5]),
                                       ("edge", [5, 2]), ("reflect", [2, 2])])
def test_pad_modes_at_their_limits_match_onnxruntime(mode, pads):
    feeds = {"x": np.arange(3, dtype=np.float32)}
    model = feeds_model("Pad", feeds, 19, initializers={"p": np.array(pads, np.int64)},
                        mode=mode)
    np.testing.assert_array_equal(_onegraph(model, feeds), run_onnxruntime(model, feeds))


def test_visible_inconsistencies_are_refused_when_the_graph_is_built():
    """Graph.op runs inference, which must refuse what the kernel would refuse later."""
    with og.Graph().as_default():
        x = og.placeholder(og.float32, [2, 3], name="x")
        for build, message in [
                (lambda: og.reshape(x, [4, 4]), r"\(6 values\) to \[4, 4\]"),
                (lambda: og.transpose(x, [0, 0]), "not a permutation"),
                (lambda: og.tile(x, [1, 2, 3]), "one non-negative count per dim")]:
            with pytest.raises(og.OneGraphError, match=message):
                build()
        assert og.transpose(x, [-1, 0]).shape == (3, 2)  # negative axes still count


def test_softmax_axis_is_checked_by_inference():
    from onegraph.format import Graph
    from onegraph.ops.inference import annotate_graph

    g = Graph("g")
    x = g.add_input("x", "float32", [2])
    g.add_node("Softmax", [x], ["y"], {"axis": 5})
    g.outputs.append(g.find_tensor("y"))
    with pytest.raises(og.OneGraphError, match="axis 5 out of range for rank 1"):
        annotate_graph(g)

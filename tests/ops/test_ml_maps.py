"""Map-typed values and the ai.onnx.ml ops on them, against onnxruntime: ZipMap (a
classifier's scores as one {label: probability} dict per sample, alone and at the end of
a LinearClassifier pipeline as skl2onnx writes it, through an export back to ONNX and a
.og file, `onegraph info`), DictVectorizer and CastMap (fed maps to tensors), and the
Session's checks of fed maps."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import onegraph as og
from onegraph.convert import from_onnx, to_onnx
from onegraph.errors import ExecutionError, OpAttributeError, ShapeError
from onegraph.format import Container, DType, Graph, Model
from onegraph.train.session import Session

ort = pytest.importorskip("onnxruntime")

ML = "ai.onnx.ml"


def _map_seq(key):
    value = helper.make_tensor_type_proto(TensorProto.FLOAT, None)
    return helper.make_sequence_type_proto(helper.make_map_type_proto(key, value))


def _pipeline(labels, with_classifier=True):
    """X [N, 3] -> (LinearClassifier, SOFTMAX ->) ZipMap, outputs label and probability
    maps as skl2onnx names them; `labels` int64s or strings."""
    key = TensorProto.STRING if isinstance(labels[0], str) else TensorProto.INT64
    attr = "classlabels_strings" if key == TensorProto.STRING else "classlabels_int64s"
    rng = np.random.default_rng(3)
    nodes, outs = [], []
    scores = "X"
    if with_classifier:
        lin_attr = "classlabels_strings" if key == TensorProto.STRING else "classlabels_ints"
        nodes.append(helper.make_node(
            "LinearClassifier", ["X"], ["label", "scores"], domain=ML,
            coefficients=rng.normal(size=3 * len(labels)).tolist(),
            intercepts=rng.normal(size=len(labels)).tolist(), post_transform="SOFTMAX",
            **{lin_attr: labels}))
        outs.append(helper.make_tensor_value_info("label", key, ["N"]))
        scores = "scores"
    nodes.append(helper.make_node("ZipMap", [scores], ["probabilities"], domain=ML,
                                  **{attr: labels}))
    outs.append(helper.make_value_info("probabilities", _map_seq(key)))
    width = 3 if with_classifier else len(labels)
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(
        "X", TensorProto.FLOAT, ["N", width])], outs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19),
                                                helper.make_opsetid(ML, 1)])
    m.ir_version = 9
    return m


def _ort(m, x):
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"X": x})


def _same_maps(got, want):
    assert isinstance(got, list) and len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.keys() == w.keys()  # onnxruntime's maps are key-sorted; ours in label order
        np.testing.assert_allclose([g[k] for k in w], list(w.values()), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("labels", [[10, 12, 14, 3], ["setosa", "versicolor", "virginica"]])
@pytest.mark.parametrize("rows", [0, 1, 5])
def test_zipmap_pipeline_matches_onnxruntime(labels, rows):
    m = _pipeline(labels)
    x = np.random.default_rng(rows).normal(size=(rows, 3)).astype(np.float32)
    want = _ort(m, x)
    model = from_onnx(m)
    got = Session(model).run(["label", "probabilities"], {"X": x})
    np.testing.assert_array_equal(got[0], want[0])
    _same_maps(got[1], want[1])
    key = Container.MAP_STRING if isinstance(labels[0], str) else Container.MAP_INT64
    out = model.graph.tensors[model.graph.outputs[1]]
    assert out.containers == (Container.SEQUENCE, key) and out.dtype is DType.FLOAT32


@pytest.mark.parametrize("labels", [[0, 1], ["no", "yes", "maybe"]])
def test_zipmap_round_trips_through_onnx_and_og(labels, tmp_path):
    """Exported back to ONNX (checker, full_check) the map type survives and onnxruntime
    gives the original's maps; a .og file keeps the wrappers; `info` names them."""
    import onnx

    from onegraph.info import describe, format_text

    m = _pipeline(labels, with_classifier=False)
    x = np.random.default_rng(1).random((4, len(labels))).astype(np.float32)
    model = from_onnx(m)
    back = to_onnx(model)
    onnx.checker.check_model(back, full_check=True)
    assert back.graph.output[0].type.sequence_type.elem_type.HasField("map_type")
    _same_maps(_ort(back, x)[0], _ort(m, x)[0])
    og.save(model, tmp_path / "z.og")
    loaded = og.load(tmp_path / "z.og")
    _same_maps(Session(loaded).run(["probabilities"], {"X": x})[0], _ort(m, x)[0])
    key = "string" if isinstance(labels[0], str) else "int64"
    assert f"probabilities: sequence<map<{key}, float32" in format_text(describe(loaded))


def test_zipmap_one_row_input_and_errors():
    op = og.ops.get_op("ZipMap", ML)
    attrs = op.resolve_attrs({"classlabels_int64s": [4, 5]}, num_outputs=1)
    (maps,) = op.kernel([np.array([0.25, 0.75], np.float32)], attrs, None)
    assert maps == [{4: 0.25, 5: 0.75}]
    with pytest.raises(ShapeError, match="3 columns for 2 labels"):
        op.kernel([np.zeros((1, 3), np.float32)], attrs, None)
    with pytest.raises(ShapeError, match=r"\[N, C\] or \[C\]"):
        op.kernel([np.zeros((1, 1, 2), np.float32)], attrs, None)
    with pytest.raises(OpAttributeError, match="exactly one of classlabels_int64s"):
        op.kernel([np.zeros((1, 2), np.float32)],
                  op.resolve_attrs({"classlabels_int64s": [1, 2],
                                    "classlabels_strings": ["a", "b"]}), None)


def test_session_checks_fed_maps():
    """A map-typed graph input takes a dict with int (or str) keys, each value checked
    against the element type; anything else is a ShapeError naming the input."""
    g = Graph("main")
    by_id = g.add_input("by_id", "float32", [], [Container.MAP_INT64])
    rows = g.add_input("rows", "float32", [], [Container.SEQUENCE, Container.MAP_STRING])
    g.outputs = [by_id, rows]
    sess = Session(Model(graphs=[g]))
    got = sess.run(["by_id", "rows"], {"by_id": {np.int64(3): 1.5, 7: 2},
                                       "rows": [{"a": np.float32(0.5)}, {}]})
    assert got[0] == {3: 1.5, 7: 2.0} and all(type(k) is int for k in got[0])
    assert got[0][7].dtype == np.float32 and got[1][0]["a"] == 0.5 and got[1][1] == {}
    bad = [({"by_id": [1.0]}, "expects a map"),
           ({"by_id": {"3": 1.0}}, "map key '3' is not an int"),
           ({"by_id": {True: 1.0}}, "map key True is not an int"),
           ({"rows": [{1: 1.0}]}, "map key 1 is not a str"),
           ({"by_id": {1: [1.0, 2.0]}}, "shape")]
    for feed, match in bad:
        full = {"by_id": {}, "rows": []}
        full.update(feed)
        with pytest.raises(ShapeError, match=match):
            sess.run(["by_id"], full)


def _map_model(node, key, value, out_elem):
    """One map-reading node: input X map(key, value), output Y a tensor of out_elem."""
    in_type = helper.make_map_type_proto(key, helper.make_tensor_type_proto(value, None))
    graph = helper.make_graph([node], "g", [helper.make_value_info("X", in_type)],
                              [helper.make_tensor_value_info("Y", out_elem, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19),
                                                helper.make_opsetid(ML, 1)])
    m.ir_version = 9
    return m


def _run_both(m, feed):
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"X": feed})[0]
    got = Session(from_onnx(m)).run(["Y"], {"X": feed})[0]
    return got, want


@pytest.mark.parametrize("case", [
    ("string_vocabulary", ["a", "c", "b", "z"], TensorProto.STRING, TensorProto.FLOAT,
     {"a": 4.0, "c": 8.0}),
    ("string_vocabulary", ["a", "c", "b", "z"], TensorProto.STRING, TensorProto.FLOAT,
     {"z": -1.5, "unknown": 7.0}),                        # keys outside: ignored
    ("string_vocabulary", ["x", "y"], TensorProto.STRING, TensorProto.FLOAT, {"y": 3.0}),
    ("int64_vocabulary", [5, 3, 1, 8], TensorProto.INT64, TensorProto.FLOAT,
     {1: 2.5, 8: 0.25, 5: -3.0}),
    ("int64_vocabulary", [5, 3, 1], TensorProto.INT64, TensorProto.FLOAT, {3: 7.0, 9: 1.0}),
], ids=str)
def test_dict_vectorizer_matches_onnxruntime(case):
    attr, vocab, key, value, feed = case
    node = helper.make_node("DictVectorizer", ["X"], ["Y"], domain=ML, **{attr: vocab})
    got, want = _run_both(_map_model(node, key, value, value), feed)
    assert got.shape == want.shape == (1, len(vocab)) and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("form", ["DENSE", "SPARSE"])
@pytest.mark.parametrize("cast_to", ["TO_FLOAT", "TO_STRING", "TO_INT64"])
def test_cast_map_matches_onnxruntime(form, cast_to):
    elem = {"TO_FLOAT": TensorProto.FLOAT, "TO_STRING": TensorProto.STRING,
            "TO_INT64": TensorProto.INT64}[cast_to]
    node = helper.make_node("CastMap", ["X"], ["Y"], domain=ML, cast_to=cast_to,
                            map_form=form, max_map=6)
    feed = {4: 2.7, 1: -1.75, 2: 3.0, 9: 5.0}  # key 9 lies past max_map: dropped
    got, want = _run_both(_map_model(node, TensorProto.INT64, TensorProto.FLOAT, elem), feed)
    assert got.shape == want.shape and got.dtype == want.dtype
    if cast_to == "TO_STRING" and form == "SPARSE":
        # onnxruntime fills missing slots with "0.f"; we format zero like the values
        filled = [k for k in range(6) if k not in feed]
        assert [want[0, k] for k in filled] == ["0.f"] * len(filled)
        assert [got[0, k] for k in filled] == ["0.000000"] * len(filled)
        keep = [k for k in range(6) if k in feed]
        np.testing.assert_array_equal(got[0, keep], want[0, keep])
    else:
        np.testing.assert_array_equal(got, want)


def test_map_ops_edge_cases_and_errors():
    """Cases onnxruntime cannot be fed from Python (empty maps, int64 or string values)
    checked directly, and the named errors."""
    vec = og.ops.get_op("DictVectorizer", ML)
    ints = vec.resolve_attrs({"int64_vocabulary": [7, 2, 9]}, num_outputs=1)
    (y,) = vec.kernel([{9: 4, 7: np.asarray(np.int64(-2))}], ints, None)
    assert y.dtype == np.int64 and y.tolist() == [[-2, 0, 4]]
    (y,) = vec.kernel([{2: "two"}], ints, None)
    assert y.dtype == object and y.tolist() == [["", "two", ""]]
    with pytest.raises(OpAttributeError, match="exactly one of int64_vocabulary"):
        vec.kernel([{}], vec.resolve_attrs({}), None)
    attrs = vec.resolve_attrs({"string_vocabulary": ["a"]}, num_outputs=1)
    with pytest.raises(ShapeError, match="must be a map"):
        vec.kernel([np.zeros(2)], attrs, None)
    with pytest.raises(ShapeError, match="keys must be strings"):
        vec.kernel([{1: 1.0}], attrs, None)
    (empty,) = vec.kernel([{}], attrs, None)  # onnxruntime refuses an empty map
    np.testing.assert_array_equal(empty, np.zeros((1, 1), np.float32))
    cast = og.ops.get_op("CastMap", ML)
    with pytest.raises(OpAttributeError, match="cast_to must be one of"):
        cast.kernel([{1: 1.0}], cast.resolve_attrs({"cast_to": "TO_BOOL"}), None)
    with pytest.raises(OpAttributeError, match="max_map must be >= 1"):
        cast.kernel([{1: 1.0}], cast.resolve_attrs({"map_form": "SPARSE", "max_map": 0}),
                    None)
    with pytest.raises(ShapeError, match="keys must be ints"):
        cast.kernel([{"a": 1.0}], cast.resolve_attrs({}), None)
    with pytest.raises(ExecutionError, match="cannot cast a string value"):
        cast.kernel([{1: "abc"}], cast.resolve_attrs({}), None)
    (parsed,) = cast.kernel([{2: "2.5", 1: np.array("-1", dtype=object)}],
                            cast.resolve_attrs({"cast_to": "TO_INT64"}), None)
    np.testing.assert_array_equal(parsed, [[-1, 2]])

"""Named symbolic dimensions (`Tensor.dim_names`, schema 1.4): ONNX's dim_params survive
ONNX -> .og -> ONNX, onnxruntime's free-dimension overrides work on the result as on
the original, files written before the field load, and a malformed `dim_names` field
is a FormatError naming it.
"""

from __future__ import annotations

import numpy as np
import pytest

import onegraph
from onegraph import FormatError
from onegraph.format import SCHEMA_VERSION, Graph, Model
from onegraph.format.fb import Tensor as FbTensor
from onegraph.format.reader import parse

from . import craft

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from onegraph.convert import from_onnx, to_onnx  # noqa: E402


# -- ONNX -> .og -> ONNX --------------------------------------------------------------

def symbolic_model():
    """x ["batch", 3] -> Relu -> h (value_info ["batch", 3]) -> Neg -> o1 ["batch", 3];
    y ["batch", "seq"] -> Neg -> o2 ["batch", "seq"]; If(c) over x whose branch outputs
    are ["batch", 3] -> o3 ["batch", 3]."""
    f = TensorProto.FLOAT
    vi = helper.make_tensor_value_info
    then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["t_out"])], "then_g",
                               [], [vi("t_out", f, ["batch", 3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e_out"])], "else_g",
                               [], [vi("e_out", f, ["batch", 3])])
    nodes = [helper.make_node("Relu", ["x"], ["h"], name="relu"),
             helper.make_node("Neg", ["h"], ["o1"], name="neg1"),
             helper.make_node("Neg", ["y"], ["o2"], name="neg2"),
             helper.make_node("If", ["c"], ["o3"], name="if", then_branch=then_g,
                              else_branch=else_g)]
    graph = helper.make_graph(
        nodes, "symbolic",
        [vi("x", f, ["batch", 3]), vi("y", f, ["batch", "seq"]), vi("c", TensorProto.BOOL, [])],
        [vi("o1", f, ["batch", 3]), vi("o2", f, ["batch", "seq"]), vi("o3", f, ["batch", 3])],
        value_info=[vi("h", f, ["batch", 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.checker.check_model(model, full_check=True)
    return model


def dims(value_info) -> list:
    """A ValueInfoProto's dims: an int for a dim_value, the str for a dim_param."""
    return [d.dim_value if d.HasField("dim_value") else d.dim_param
            for d in value_info.type.tensor_type.shape.dim]


def round_trip(proto, tmp_path, **kwargs):
    og_path = tmp_path / "m.og"
    onegraph.save(from_onnx(proto), og_path)
    return to_onnx(onegraph.load(og_path), **kwargs)


def test_import_keeps_dim_params():
    """from_onnx records each dim_param in dim_names ("" for a sized dim); the size of
    a named dim is -1; a tensor without names has None."""
    g = from_onnx(symbolic_model()).graph
    named = {t.name: (t.shape, t.dim_names) for t in g.tensors}
    assert named["x"] == ((-1, 3), ("batch", ""))
    assert named["y"] == ((-1, -1), ("batch", "seq"))
    assert named["h"] == ((-1, 3), ("batch", ""))
    assert named["o2"] == ((-1, -1), ("batch", "seq"))
    assert named["c"] == ((), None)
    body = g.nodes[3].attributes["then_branch"]
    assert body.tensors[body.outputs[0]].dim_names == ("batch", "")


def test_dim_params_survive_og_round_trip(tmp_path):
    """ONNX -> from_onnx -> save -> load -> to_onnx writes the same dim_params on the
    inputs, outputs, value_info and subgraph outputs; sized dims stay sized."""
    proto = round_trip(symbolic_model(), tmp_path)
    g = proto.graph
    assert {v.name: dims(v) for v in g.input} == {
        "x": ["batch", 3], "y": ["batch", "seq"], "c": []}
    assert {v.name: dims(v) for v in g.output} == {
        "o1": ["batch", 3], "o2": ["batch", "seq"], "o3": ["batch", 3]}
    assert {v.name: dims(v) for v in g.value_info}["h"] == ["batch", 3]
    if_node = next(n for n in g.node if n.op_type == "If")
    branches = {a.name: a.g for a in if_node.attribute}
    assert dims(branches["then_branch"].output[0]) == ["batch", 3]
    assert dims(branches["else_branch"].output[0]) == ["batch", 3]
    # and once more: the exported file imports to the same names
    again = round_trip(proto, tmp_path)
    assert [dims(v) for v in again.graph.input] == [dims(v) for v in g.input]
    assert [dims(v) for v in again.graph.output] == [dims(v) for v in g.output]


def test_dim_params_survive_export_to_older_opset(tmp_path):
    """The version converter keeps the dim_params (export to opset 17)."""
    proto = round_trip(symbolic_model(), tmp_path, opset=17)
    assert [dims(v) for v in proto.graph.input] == [["batch", 3], ["batch", "seq"], []]


def session(proto, batch: int | None):
    options = ort.SessionOptions()
    if batch is not None:
        options.add_free_dimension_override_by_name("batch", batch)
    return ort.InferenceSession(proto.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


def behaviour(proto, batch: int | None) -> dict:
    """What onnxruntime reports and does with `proto` under an override of "batch":
    input and output shapes, the outputs for a batch of 1, and whether a batch of 2 is
    accepted (the error class name if not)."""
    s = session(proto, batch)
    rng = np.random.default_rng(0)

    def feeds(n):
        return {"x": rng.standard_normal((n, 3)).astype(np.float32),
                "y": rng.standard_normal((n, 4)).astype(np.float32),
                "c": np.array(True)}

    out = {"inputs": [i.shape for i in s.get_inputs()],
           "outputs": [o.shape for o in s.get_outputs()],
           "batch1": [r.tolist() for r in s.run(None, feeds(1))]}
    try:
        s.run(None, feeds(2))
        out["batch2"] = "ran"
    except Exception as e:  # noqa: BLE001 - onnxruntime's own error classes
        out["batch2"] = type(e).__name__
    return out


@pytest.mark.parametrize("batch", [None, 1])
def test_free_dimension_override_works_as_on_the_original(tmp_path, batch):
    """onnxruntime, the independent oracle: with and without
    add_free_dimension_override_by_name("batch", 1) the round-tripped model reports
    the same shapes, computes the same outputs and accepts or refuses a batch of 2
    exactly as the original."""
    original = symbolic_model()
    exported = round_trip(original, tmp_path)
    want = behaviour(original, batch)
    assert behaviour(exported, batch) == want
    if batch is None:
        assert want["inputs"][:2] == [["batch", 3], ["batch", "seq"]]
    else:
        assert want["inputs"][:2] == [[1, 3], [1, "seq"]]
        assert want["batch2"] != "ran"


def test_a_dim_whose_size_inference_learns_loses_its_name(tmp_path):
    """A shape only ONNX's inference stated is a hint that onegraph's rules refine: a
    dim whose size they learn keeps no name (ONNX names Reshape(x, Shape(x))'s dims
    unk__0, unk__1; onegraph knows them as 4, 6), so the model lints and saves."""
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["s"]),
         helper.make_node("Reshape", ["x", "s"], ["r"]),
         helper.make_node("Relu", ["r"], ["o"])], "g",
        [vi("x", TensorProto.FLOAT, [4, 6])], [vi("o", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    inferred = onnx.shape_inference.infer_shapes(model).graph.value_info
    assert [dims(v) for v in inferred if v.name == "r"] == [["unk__0", "unk__1"]]
    m = from_onnx(model)
    r = m.graph.tensors[m.graph.find_tensor("r")]
    assert (r.shape, r.dim_names) == ((4, 6), None)
    onegraph.save(m, tmp_path / "m.og")


# -- the IR and the file --------------------------------------------------------------

def tiny(dim_names=("batch", ""), shape=(-1, 3)) -> Model:
    g = Graph("main")
    x = g.add_input("x", "float32", shape)
    g.tensors[x].dim_names = dim_names
    (y,) = g.add_node("Relu", [x], ["y"])
    g.outputs = [y]
    return Model(graphs=[g], opset_imports={"": 21})


def test_schema_version_has_dim_names():
    """The field came with minor version 4."""
    assert SCHEMA_VERSION >= (1, 4)


def test_dim_names_round_trip_through_the_file(tmp_path):
    """dim_names save and load as given (all-empty names as None, which they equal);
    None stays None; a loaded model re-saves byte for byte."""
    for names, stored in ((("batch", ""), ("batch", "")), (("", ""), None), (None, None)):
        model = tiny(names)
        path = tmp_path / "m.og"
        onegraph.save(model, path)
        loaded = onegraph.load(path)
        assert loaded.graph.tensors[0].dim_names == stored
        assert loaded == model
        assert onegraph.format.serialize(loaded)[0] == onegraph.format.serialize(model)[0]


def test_dim_names_take_part_in_equality():
    """Two tensors differing only in dim_names are not equal."""
    assert tiny(("batch", "")) != tiny(("n", ""))
    assert tiny(("batch", "")) != tiny(None)


def old_image(model: Model, monkeypatch) -> bytes:
    """`model` serialized as a schema-1.3 writer did: its Tensor tables have 7 fields
    (StartObject(7)), so no vtable can hold a dim_names entry."""
    monkeypatch.setattr(FbTensor, "Start", lambda b: b.StartObject(7))
    try:
        return craft.image_unchecked(model)
    finally:
        monkeypatch.undo()


def test_file_written_before_the_field_loads(tmp_path, monkeypatch):
    """A 1.3 file (Tensor tables without the field) loads with dim_names None, equal
    to the model it was written from; the current writer, given no names, writes the
    same bytes."""
    model = tiny(None)
    model.schema_version = (1, 3)
    data = old_image(model, monkeypatch)
    loaded = onegraph.load(craft.write(tmp_path / "old.og", data))
    assert loaded.schema_version == (1, 3)
    assert loaded.graph.tensors[0].dim_names is None
    assert loaded == model
    assert craft.image_unchecked(model) == data


def refused(tmp_path, data: bytes, match: str):
    with pytest.raises(FormatError, match=match):
        onegraph.load(craft.write(tmp_path / "bad.og", data))
    with pytest.raises(FormatError, match=match):
        parse(data)


@pytest.mark.parametrize("names, shape, match", [
    (("batch",), (-1, 3),
     r"graphs\[0\]\.tensors\[0\]\.dim_names: 1 names for a shape of rank 2"),
    (("batch", "", ""), (-1, 3),
     r"graphs\[0\]\.tensors\[0\]\.dim_names: 3 names for a shape of rank 2"),
    (("batch", "n"), (-1, 3),
     r"graphs\[0\]\.tensors\[0\]\.dim_names\[1\]: name 'n' on a dimension of size 3"),
    (("batch",), None,
     r"graphs\[0\]\.tensors\[0\]\.dim_names: 1 names for a tensor without a shape"),
])
def test_crafted_bad_dim_names_refused(tmp_path, monkeypatch, names, shape, match):
    """A file whose dim_names has the wrong length, names a sized dim, or exists
    without a shape is refused naming the field (onegraph's writer drops names that
    do not fit; here it is made to write them as given, as a buggy producer would)."""
    monkeypatch.setattr(onegraph.format.writer, "fitting_dim_names", lambda t: t.dim_names)
    refused(tmp_path, craft.image_unchecked(tiny(names, shape)), match)


def test_crafted_non_utf8_dim_name_refused(tmp_path):
    """A dim name whose bytes are not UTF-8 is refused naming the entry."""
    data = craft.image_unchecked(tiny(("qz7k9", "")))
    assert data.count(b"qz7k9") == 1
    data = data.replace(b"qz7k9", b"qz\xff\xfe9")
    refused(tmp_path, data,
            r"graphs\[0\]\.tensors\[0\]\.dim_names\[0\]: string is not valid UTF-8")


@pytest.mark.parametrize("names, shape, fitted", [
    (("batch",), (-1, 3), None),
    (("batch", "n"), (-1, 3), ("batch", "")),
    (("batch",), None, None),
    (("", "n"), (-1, 3), None),
])
def test_names_that_no_longer_fit_the_shape_are_dropped_when_saved(tmp_path, names,
                                                                   shape, fitted):
    """Shape inference may learn a named dim's size (or the rank) after import: the
    stale names are not written, and saving does not fail."""
    model = tiny(None, shape)
    model.graph.tensors[0].dim_names = names
    onegraph.save(model, tmp_path / "m.og")
    assert onegraph.load(tmp_path / "m.og").graph.tensors[0].dim_names == fitted


@pytest.mark.parametrize("names, shape, match", [
    (("batch", 7), (-1, -1), r"\.dim_names\[1\]: int is not a str"),
    (("\ud800", ""), (-1, 3), r"\.dim_names\[0\]: .* is not valid UTF-8"),
    ("ab", (-1, -1), r"\.dim_names: str is not a sequence of str"),
])
def test_lint_refuses_bad_dim_names(tmp_path, names, shape, match):
    """Model.lint (and so save) refuses what the reader would, naming the field; no
    file is written."""
    model = tiny(None, shape)
    model.graph.tensors[0].dim_names = names  # set after construction: kept as given
    with pytest.raises(FormatError, match=r"tensors\[0\] \('x'\)" + match):
        model.lint()
    with pytest.raises(FormatError, match=match):
        onegraph.save(model, tmp_path / "bad.og")
    assert not (tmp_path / "bad.og").exists()

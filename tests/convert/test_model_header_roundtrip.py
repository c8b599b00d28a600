"""The ModelProto header through ONNX -> .og -> ONNX: doc_string, graph name, domain and
model_version come back where they were (not as metadata_props), the producer is
onegraph's, user metadata_props are unchanged, and a second round trip changes
nothing; and the exported ir_version covers the element types the model uses.
"""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onegraph
from onegraph.convert import from_onnx, to_onnx
from onegraph.convert.onnx_export import _TYPE_IR_VERSIONS
from onegraph.format import DType, Graph, Model

USER_PROPS = {"author": "someone", "license": "MIT", "onnx.custom": "kept", "": "empty key"}


def header_model():
    vi = helper.make_tensor_value_info
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                              "my_graph", [vi("x", TensorProto.FLOAT, ["n", 3])],
                              [vi("y", TensorProto.FLOAT, ["n", 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)],
                              producer_name="pytorch", producer_version="2.13.0",
                              doc_string="A model with a header.", domain="com.example",
                              model_version=42)
    helper.set_model_props(model, dict(USER_PROPS))
    model.ir_version = 10
    onnx.checker.check_model(model, full_check=True)
    return model


def round_trip(proto, tmp_path, name="m.og"):
    path = tmp_path / name
    onegraph.save(from_onnx(proto), path)
    return to_onnx(onegraph.load(path))


def props(proto) -> dict:
    return {p.key: p.value for p in proto.metadata_props}


def test_import_records_the_header():
    """from_onnx keeps every header field in the metadata, next to the user props."""
    m = from_onnx(header_model())
    assert m.metadata == {**USER_PROPS,
                          "onnx.producer_name": "pytorch",
                          "onnx.producer_version": "2.13.0",
                          "onnx.doc_string": "A model with a header.",
                          "onnx.graph_name": "my_graph",
                          "onnx.domain": "com.example",
                          "onnx.model_version": "42"}


def test_header_comes_back_in_place(tmp_path):
    """After ONNX -> .og -> ONNX the header fields are in the header; no onnx.* key
    of the importer's is a metadata_prop; the producer is onegraph."""
    proto = round_trip(header_model(), tmp_path)
    assert proto.doc_string == "A model with a header."
    assert proto.graph.name == "my_graph"
    assert proto.domain == "com.example"
    assert proto.model_version == 42
    assert proto.producer_name == "onegraph"
    assert proto.producer_version == onegraph.__version__
    assert props(proto) == USER_PROPS
    assert [p.key for p in proto.metadata_props] == sorted(USER_PROPS)


def test_second_round_trip_is_stable(tmp_path):
    """Exporting what was exported and imported again gives the same protobuf."""
    first = round_trip(header_model(), tmp_path, "a.og")
    second = round_trip(first, tmp_path, "b.og")
    assert second.SerializeToString(deterministic=True) == \
        first.SerializeToString(deterministic=True)


def test_model_without_header_fields(tmp_path):
    """A model with an empty header exports an empty header and only its own props;
    its unnamed graph gets the importer's name."""
    proto = header_model()
    for field in ("producer_name", "producer_version", "doc_string", "domain",
                  "model_version"):
        proto.ClearField(field)
    del proto.metadata_props[:]
    proto.graph.name = ""
    out = round_trip(proto, tmp_path)
    assert (out.doc_string, out.domain, out.model_version) == ("", "", 0)
    assert out.graph.name == "main"
    assert props(out) == {}


def test_metadata_set_by_hand():
    """Metadata a user sets goes where the importer's would; an onnx.model_version that
    is no int64 cannot go in the header and stays a metadata_prop."""
    g = Graph("main")
    x = g.add_input("x", "float32", [2])
    (y,) = g.add_node("Relu", [x], ["y"])
    g.outputs = [y]
    m = Model(graphs=[g], opset_imports={"": 21},
              metadata={"onnx.graph_name": "renamed", "onnx.model_version": "v2",
                        "onnx.producer_name": "me", "k": "v"})
    proto = to_onnx(m)
    assert proto.graph.name == "renamed"
    assert proto.model_version == 0
    assert props(proto) == {"k": "v", "onnx.model_version": "v2"}
    m.metadata["onnx.model_version"] = str(2 ** 63)
    assert props(to_onnx(m))["onnx.model_version"] == str(2 ** 63)
    m.metadata["onnx.model_version"] = " 7 "
    assert to_onnx(m).model_version == 7


# -- ir_version ------------------------------------------------------------------------

def proto_ir_table() -> dict[str, int]:
    """{element type: IR version} read from the installed onnx.proto's comments on
    `enum Version` ("IR VERSION 10 ... // Added UINT4, INT4, ...")."""
    import os

    text = open(os.path.join(os.path.dirname(onnx.__file__), "onnx.proto")).read()
    block = text[text.index("enum Version"):]
    block = block[:block.index("}")]
    types = set(TensorProto.DataType.keys())
    table = {}
    version = None
    for line in block.splitlines():
        found = re.search(r"IR VERSION (\d+)", line)
        if found:
            version = int(found.group(1))
        elif version is not None and "Added" in line:
            for word in re.findall(r"[A-Z][A-Z0-9]+", line):
                if word in types:
                    table.setdefault(word, version)
    return table


def test_type_table_matches_onnx_proto():
    """The exporter's table is what onnx.proto says for each type IR 5 or later added
    (BFLOAT16, from IR 4, is the export's floor)."""
    table = {k: v for k, v in proto_ir_table().items() if v > 4}
    assert {k: v for k, v in _TYPE_IR_VERSIONS.items() if k in table} == table
    assert set(table) <= set(_TYPE_IR_VERSIONS)


def typed_model(*arrays, opset=17):
    """x -> Relu -> y at `opset`, plus unused constants holding `arrays`."""
    g = Graph("main")
    x = g.add_input("x", "float32", [2])
    (y,) = g.add_node("Relu", [x], ["y"])
    g.outputs = [y]
    for k, a in enumerate(arrays):
        g.add_constant(f"c{k}", a)
    return Model(graphs=[g], opset_imports={"": opset})


@pytest.fixture(scope="module")
def ml_dtypes():
    return pytest.importorskip("ml_dtypes")


def test_ir_version_covers_int4_and_float8_initializers(ml_dtypes, tmp_path):
    """Opset 17 alone needs IR 8; a float8 initializer needs IR 9, an int4 one IR 10
    (and the model still passes the checker and loads in onnxruntime)."""
    import onnxruntime as ort

    f8 = np.array([1.5, -2.0], dtype=ml_dtypes.float8_e4m3fn)
    i4 = np.array([1, -2, 7], dtype=ml_dtypes.int4)
    assert to_onnx(typed_model()).ir_version == 8
    assert to_onnx(typed_model(f8)).ir_version == 9
    proto = to_onnx(typed_model(f8, i4))
    assert proto.ir_version == 10
    assert {t.name: t.data_type for t in proto.graph.initializer} == {
        "c0": TensorProto.FLOAT8E4M3FN, "c1": TensorProto.INT4}
    # the same after a save and load, and at a target opset below the model's
    path = tmp_path / "t.og"
    onegraph.save(typed_model(f8, i4, opset=21), path)
    assert to_onnx(onegraph.load(path), opset=17).ir_version == 10
    session = ort.InferenceSession(proto.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    out = session.run(None, {"x": np.array([-1.0, 2.0], np.float32)})[0]
    np.testing.assert_array_equal(out, [0.0, 2.0])


def test_ir_version_sees_types_in_subgraphs_attributes_and_value_info(ml_dtypes):
    """Element types count wherever they appear: a Constant's tensor inside an If
    branch, a graph input, or a Cast's `to` (checked without the ONNX checker: opset
    17's ops do not take these types)."""
    f8 = np.array([1.0], dtype=ml_dtypes.float8_e5m2)

    def model(build):
        g = Graph("main")
        x = g.add_input("x", "float32", [1])
        c = g.add_input("c", "bool", [])
        build(g, x, c)
        return Model(graphs=[g], opset_imports={"": 17})

    def subgraph_constant(g, x, c):
        branch = Graph("then")
        (k,) = branch.add_node("Constant", [], ["k"], {"value": f8})
        branch.tensors[k].dtype, branch.tensors[k].shape = DType.FLOAT8E5M2, (1,)
        branch.outputs = [k]
        other = Graph("else")
        (k2,) = other.add_node("Constant", [], ["k2"], {"value": f8})
        other.tensors[k2].dtype, other.tensors[k2].shape = DType.FLOAT8E5M2, (1,)
        other.outputs = [k2]
        g.outputs = g.add_node("If", [c], ["y"], {"then_branch": branch,
                                                   "else_branch": other})

    def float8_input(g, x, c):
        z = g.add_input("z", "float8e4m3fnuz", [1])
        g.outputs = g.add_node("Identity", [z], ["y"])

    def cast(g, x, c):
        (y,) = g.add_node("Cast", [x], ["y"], {"to": TensorProto.UINT4})
        g.tensors[y].dtype, g.tensors[y].shape = DType.FLOAT32, (1,)  # only `to` says uint4
        g.outputs = [y]

    assert to_onnx(model(subgraph_constant), check=False).ir_version == 9
    assert to_onnx(model(float8_input), check=False).ir_version == 9
    assert to_onnx(model(cast), check=False).ir_version == 10

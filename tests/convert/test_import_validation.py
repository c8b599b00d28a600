"""ONNX import validation: external data everywhere, sparse initializers, node names,
cycles through subgraphs, control-flow signatures, op schemas, opset_import, messages.

Each malformed model must raise one ConversionError naming what is wrong and where;
valid models nearby must still import and match onnxruntime.
"""

import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onegraph as og
from onegraph.convert import from_onnx, to_onnx, unsupported_ops
from onegraph.errors import ConversionError
from onegraph.format import Graph

vi = helper.make_tensor_value_info
F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, initializers=(), opset=17, functions=(), extra_opsets=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v)
                                                  for d, v in extra_opsets]
    return helper.make_model(graph, opset_imports=opsets, functions=list(functions))


def _ort(model_or_path, feeds):
    data = model_or_path if isinstance(model_or_path, str) else \
        model_or_path.SerializeToString()
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _run(model_or_path, fetches, feeds):
    return og.Session(from_onnx(model_or_path)).run(fetches, feeds)


def _external(name, dtype, dims, location, offset=None, length=None):
    t = onnx.TensorProto(name=name, data_type=dtype, dims=dims)
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value=location)
    if offset is not None:
        t.external_data.add(key="offset", value=str(offset))
    if length is not None:
        t.external_data.add(key="length", value=str(length))
    return t


# ----------------------------------------------------------------- 1. external data in
# model-local functions (and wherever else a tensor can be)

def _leak_model(location):
    """A model whose local function 'local::Leak' holds a Constant with external data."""
    t = _external("v", TensorProto.UINT8, [16], location)
    fn = helper.make_function("local", "Leak", [], ["c"],
                              [helper.make_node("Constant", [], ["c"], value=t)],
                              [helper.make_opsetid("", 17)])
    return _model([helper.make_node("Leak", [], ["y"], domain="local", name="call")], [],
                  [vi("y", TensorProto.UINT8, [16])], functions=[fn],
                  extra_opsets=[("local", 1)])


def test_function_external_data_in_memory_model_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.makedirs("secret")
    (tmp_path / "secret" / "key.bin").write_bytes(b"SECRETSECRETSECR")  # the decoy
    with pytest.raises(ConversionError, match=r"function 'local::Leak'.*Constant.*"
                                              r"not loaded from a file"):
        from_onnx(_leak_model("secret/key.bin"))


def test_function_external_data_read_from_model_folder_not_cwd(tmp_path, monkeypatch):
    folder, cwd = tmp_path / "model", tmp_path / "cwd"
    folder.mkdir()
    cwd.mkdir()
    (folder / "c.bin").write_bytes(bytes(range(16)))
    (cwd / "c.bin").write_bytes(b"DECOYDECOYDECOY!")
    path = str(folder / "m.onnx")
    onnx.save(_leak_model("c.bin"), path)
    monkeypatch.chdir(cwd)
    (got,) = _run(path, ["y"], {})
    assert bytes(got) != b"DECOYDECOYDECOY!"
    np.testing.assert_array_equal(got, _ort(path, {})[0])
    np.testing.assert_array_equal(got, np.arange(16, dtype=np.uint8))


@pytest.mark.parametrize("escape", ["../c.bin", "ABSOLUTE", "link.bin"])
def test_function_external_data_escapes_are_refused(tmp_path, escape):
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "c.bin").write_bytes(b"SECRETSECRETSECR")
    if escape == "ABSOLUTE":
        escape = str(tmp_path / "c.bin")
    elif escape == "link.bin":
        os.symlink(tmp_path / "c.bin", folder / "link.bin")
    path = str(folder / "m.onnx")
    onnx.save(_leak_model(escape), path)
    with pytest.raises(ConversionError, match=r"function 'local::Leak'.*"
                                              r"(escapes|outside) the model's folder"):
        from_onnx(path)


def test_function_attribute_default_with_external_data(tmp_path, monkeypatch):
    """A tensor default (FunctionProto.attribute_proto) is loaded from the model folder;
    the call that leaves the attribute out gets the default (onnx's inliner drops it)."""
    folder, cwd = tmp_path / "model", tmp_path / "cwd"
    folder.mkdir()
    cwd.mkdir()
    np.array([3, 4], np.float32).tofile(folder / "d.bin")
    np.array([666, 666], np.float32).tofile(cwd / "d.bin")
    node = helper.make_node("Constant", [], ["c"])
    node.attribute.append(onnx.AttributeProto(name="value", ref_attr_name="v",
                                              type=onnx.AttributeProto.TENSOR))
    fn = helper.make_function("local", "C", [], ["c"], [node], [helper.make_opsetid("", 17)])
    fn.attribute_proto.append(helper.make_attribute("v", _external("v", F, [2], "d.bin")))
    m = _model([helper.make_node("C", [], ["y"], domain="local")], [], [vi("y", F, [2])],
               functions=[fn], extra_opsets=[("local", 1)])
    path = str(folder / "m.onnx")
    onnx.save(m, path)
    monkeypatch.chdir(cwd)
    np.testing.assert_array_equal(_run(path, ["y"], {})[0], _ort(path, {})[0])
    with pytest.raises(ConversionError, match="attribute default 'v'.*not loaded from a file"):
        from_onnx(m)


def test_subgraph_constant_external_data_read_from_model_folder(tmp_path, monkeypatch):
    folder, cwd = tmp_path / "model", tmp_path / "cwd"
    folder.mkdir()
    cwd.mkdir()
    np.array([1, 2], np.float32).tofile(folder / "k.bin")
    np.array([666, 666], np.float32).tofile(cwd / "k.bin")
    then_b = helper.make_graph(
        [helper.make_node("Constant", [], ["ot"], value=_external("k", F, [2], "k.bin"))],
        "t", [], [vi("ot", F, [2])])
    else_b = helper.make_graph([helper.make_node("Neg", ["x"], ["oe"])], "e", [],
                               [vi("oe", F, [2])])
    m = _model([helper.make_node("If", ["c"], ["y"], then_branch=then_b, else_branch=else_b)],
               [vi("x", F, [2]), vi("c", TensorProto.BOOL, [])], [vi("y", F, [2])])
    path = str(folder / "m.onnx")
    onnx.save(m, path)
    monkeypatch.chdir(cwd)
    feeds = {"x": np.ones(2, np.float32), "c": np.array(True)}
    np.testing.assert_array_equal(_run(path, ["y"], feeds)[0], [1, 2])
    np.testing.assert_array_equal(_ort(path, feeds)[0], [1, 2])


def test_external_length_must_match_dims(tmp_path):
    (tmp_path / "w.bin").write_bytes(b"\0" * 64)
    m = _model([helper.make_node("Identity", ["w"], ["y"])], [], [vi("y", F, [2])],
               [_external("w", F, [2], "w.bin", length=12)])
    path = str(tmp_path / "m.onnx")
    onnx.save(m, path)
    with pytest.raises(ConversionError, match=r"initializer 'w'.*length 12.*need 8"):
        from_onnx(path)


# ----------------------------------------------------------------- 2. sparse external data

def _sparse_external_model(location="vals.bin"):
    g = helper.make_graph([helper.make_node("Identity", ["s"], ["y"])], "g", [],
                          [vi("y", F, [4])])
    g.sparse_initializer.append(helper.make_sparse_tensor(
        _external("s", F, [2], location),
        numpy_helper.from_array(np.array([1, 3], np.int64), "s_i"), [4]))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_sparse_external_data_read_from_model_folder_not_cwd(tmp_path, monkeypatch):
    folder, cwd = tmp_path / "model", tmp_path / "cwd"
    folder.mkdir()
    cwd.mkdir()
    np.array([5, 7], np.float32).tofile(folder / "vals.bin")
    path = str(folder / "m.onnx")
    onnx.save(_sparse_external_model(), path)
    monkeypatch.chdir(cwd)
    # the valid model imports although the working directory has no vals.bin
    np.testing.assert_array_equal(_run(path, ["y"], {})[0], [0, 5, 0, 7])
    np.array([666, 666], np.float32).tofile(cwd / "vals.bin")  # the decoy
    (got,) = _run(path, ["y"], {})
    assert 666 not in got
    np.testing.assert_array_equal(got, _ort(path, {})[0])


def test_sparse_external_data_escape_refused(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    np.array([5, 7], np.float32).tofile(tmp_path / "vals.bin")
    path = str(folder / "m.onnx")
    onnx.save(_sparse_external_model("../vals.bin"), path)
    with pytest.raises(ConversionError, match="sparse initializer 's' values.*escapes"):
        from_onnx(path)
    with pytest.raises(ConversionError, match="sparse initializer 's'.*not loaded from a"):
        from_onnx(_sparse_external_model())


# ----------------------------------------------------------------- 3. sparse validation

def _sparse_model(values, indices, dims, index_dtype=np.int64, in_subgraph=False):
    sp = helper.make_sparse_tensor(
        numpy_helper.from_array(np.asarray(values, np.float32), "s"),
        numpy_helper.from_array(np.asarray(indices, index_dtype), "s_i"), dims)
    if not in_subgraph:
        g = helper.make_graph([helper.make_node("Identity", ["s"], ["y"])], "g", [],
                              [vi("y", F, None)])
        g.sparse_initializer.append(sp)
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    then_b = helper.make_graph([helper.make_node("Identity", ["s"], ["ot"])], "t", [],
                               [vi("ot", F, None)])
    then_b.sparse_initializer.append(sp)
    else_b = helper.make_graph([helper.make_node("Identity", ["x"], ["oe"])], "e", [],
                               [vi("oe", F, None)])
    return _model([helper.make_node("If", ["c"], ["y"], then_branch=then_b,
                                    else_branch=else_b)],
                  [vi("x", F, [2]), vi("c", TensorProto.BOOL, [])], [vi("y", F, None)])


@pytest.mark.parametrize("values, indices, dims, index_dtype, match", [
    ([1.0], [0], [2 ** 40], np.int64, r"\[1099511627776\].*bytes dense"),
    ([1.0], [0], [2 ** 31], np.int64, "bytes dense"),
    ([1.0], [0], [-4], np.int64, "negative dimension"),
    ([1.0, 1.0], [[0, 0], [5, 9]], [2, 3], np.int64, r"\[5, 9\].*outside dims"),
    ([1.0, 1.0], [[0, 0], [1, -1]], [2, 3], np.int64, r"\[1, -1\].*outside dims"),
    ([1.0, 1.0], [[0, 0, 0], [1, 1, 1]], [2, 3], np.int64, r"shape \[2, 3\].*\[2, 2\]"),
    ([7.0], [-1], [4], np.int64, r"index -1 .*outside \[0, 4\)"),
    ([7.0], [4], [4], np.int64, r"index 4 .*outside \[0, 4\)"),
    ([7.0], [1.0], [4], np.float32, "indices must be integers"),
    ([7.0, 8.0], [1], [4], np.int64, "1 indices for 2 values"),
    ([7.0], [[[1]]], [4], np.int64, "1-D or 2-D"),
])
@pytest.mark.parametrize("in_subgraph", [False, True])
def test_sparse_initializer_validated_before_allocating(values, indices, dims, index_dtype,
                                                        match, in_subgraph):
    m = _sparse_model(values, indices, dims, index_dtype, in_subgraph)
    with pytest.raises(ConversionError, match=r"sparse initializer 's'.*" + match):
        from_onnx(m)


@pytest.mark.parametrize("values, indices, dims", [
    ([5.0, 7.0], [1, 3], [4]),
    ([5.0, 7.0], [[0, 2], [1, 1]], [2, 3]),
    ([], np.zeros(0, np.int64), [3]),
])
def test_valid_sparse_initializer_matches_onnxruntime(values, indices, dims):
    m = _sparse_model(values, indices, dims)
    np.testing.assert_array_equal(_run(m, ["y"], {})[0], _ort(m, {})[0])


# ----------------------------------------------------------------- 4. synthesized names

def test_synthesized_node_names_skip_real_ones():
    m = _model([helper.make_node("Relu", ["x"], ["a"]),                 # unnamed
                helper.make_node("Neg", ["a"], ["b"], name="Relu_0"),   # a real name
                helper.make_node("Relu", ["b"], ["c"], name="Relu_2"),
                helper.make_node("Relu", ["c"], ["y"])],                # unnamed, index 3
               [vi("x", F, [2])], [vi("y", F, [2])])
    names = [n.name for n in from_onnx(m).graph.nodes]
    assert len(set(names)) == len(names), names
    assert names[1:3] == ["Relu_0", "Relu_2"]


def test_graph_add_node_synthesized_name_skips_taken_names():
    g = Graph("main")
    x = g.add_input("x", "float32", [2])
    (a,) = g.add_node("Relu", [x], ["a"], name="Neg_1")
    (b,) = g.add_node("Neg", [a], ["b"])       # would be "Neg_1"
    (c,) = g.add_node("Neg", [b], ["c"], name="Neg_3")
    g.add_node("Neg", [c], ["y"])               # would be "Neg_3"
    names = [n.name for n in g.nodes]
    assert len(set(names)) == len(names), names
    assert names[0] == "Neg_1" and names[2] == "Neg_3"


# ----------------------------------------------------------------- 5. cycles via subgraphs

def _if_reading(name, out="y"):
    then_b = helper.make_graph([helper.make_node("Identity", [name], ["ot"])], "t", [],
                               [vi("ot", F, [2])])
    else_b = helper.make_graph([helper.make_node("Identity", ["x"], ["oe"])], "e", [],
                               [vi("oe", F, [2])])
    return helper.make_node("If", ["c"], [out], then_branch=then_b, else_branch=else_b,
                            name="if0")


def test_cycle_through_subgraph_outer_read_is_refused():
    m = _model([_if_reading("later"), helper.make_node("Neg", ["y"], ["later"], name="neg")],
               [vi("x", F, [2]), vi("c", TensorProto.BOOL, [])], [vi("later", F, [2])])
    with pytest.raises(ConversionError, match=r"'if0' \(If\), 'neg' \(Neg\).*cycle.*later"):
        from_onnx(m)


def test_cycle_through_nested_subgraph_is_refused():
    # main: if_outer's then branch holds if0, whose then branch reads 'later'
    inner = _if_reading("later", out="io")
    then_b = helper.make_graph([inner], "t_outer", [], [vi("io", F, [2])])
    else_b = helper.make_graph([helper.make_node("Identity", ["x"], ["eo"])], "e_outer", [],
                               [vi("eo", F, [2])])
    m = _model([helper.make_node("If", ["c"], ["y"], then_branch=then_b, else_branch=else_b,
                                 name="if_outer"),
                helper.make_node("Relu", ["y"], ["later"], name="relu")],
               [vi("x", F, [2]), vi("c", TensorProto.BOOL, [])], [vi("later", F, [2])])
    with pytest.raises(ConversionError, match=r"'if_outer' \(If\), 'relu' \(Relu\).*cycle"):
        from_onnx(m)


def test_forward_outer_read_without_cycle_still_imports():
    m = _model([_if_reading("early"), helper.make_node("Neg", ["x"], ["early"], name="neg")],
               [vi("x", F, [2]), vi("c", TensorProto.BOOL, [])], [vi("y", F, [2])])
    feeds = {"x": np.array([1, -2], np.float32), "c": np.array(True)}
    np.testing.assert_array_equal(_run(m, ["y"], feeds)[0], _ort(m, feeds)[0])


# ----------------------------------------------------------------- 6. control-flow signatures

def _branch(name, n_out, inputs=()):
    nodes = [helper.make_node("Neg", ["x"], [f"{name}{i}"]) for i in range(n_out)]
    return helper.make_graph(nodes, name, list(inputs),
                             [vi(f"{name}{i}", F, [2]) for i in range(n_out)])


@pytest.mark.parametrize("then_b, match", [
    (_branch("t", 0), "then_branch has 0 output.*If node has 1"),
    (_branch("t", 2), "then_branch has 2 output.*If node has 1"),
    (_branch("t", 1, [vi("z", F, [2])]), "then_branch declares 1 input"),
])
def test_if_branch_signature_checked(then_b, match):
    m = _model([helper.make_node("If", ["c"], ["y"], then_branch=then_b,
                                 else_branch=_branch("e", 1), name="if0")],
               [vi("x", F, [2]), vi("c", TensorProto.BOOL, [])], [vi("y", F, [2])])
    with pytest.raises(ConversionError, match="'if0'.*" + match):
        from_onnx(m)


def _loop_model(body_inputs, body_outputs, node_outputs=("y",)):
    i, cin = vi("i", TensorProto.INT64, []), vi("cin", TensorProto.BOOL, [])
    names = {"i": i, "cin": cin, "v": vi("v", F, [2])}
    nodes = [helper.make_node("Identity", ["cin"], ["cout"]),
             helper.make_node("Neg", ["v"] if "v" in body_inputs else ["x"], ["v2"]),
             helper.make_node("Identity", ["v2"], ["scan"])]
    outs = {"cout": vi("cout", TensorProto.BOOL, []), "v2": vi("v2", F, [2]),
            "scan": vi("scan", F, [2])}
    body = helper.make_graph(nodes, "body", [names[n] for n in body_inputs],
                             [outs[n] for n in body_outputs])
    m_init = numpy_helper.from_array(np.array(3, np.int64), "M")
    return _model([helper.make_node("Loop", ["M", "", "x"], list(node_outputs), body=body,
                                    name="loop0")],
                  [vi("x", F, [2])], [vi(o, F, None) for o in node_outputs], [m_init])


@pytest.mark.parametrize("body_inputs, body_outputs, node_outputs, match", [
    (("i", "cin"), ("cout", "v2"), ("y",), "body has 2 input.*needs 3"),
    (("i", "cin", "v", "v"), ("cout", "v2"), ("y",), "body has 4 input.*needs 3"),
    (("i", "cin", "v"), ("cout",), ("y",), "body has 1 output.*Loop node 1"),
    (("i", "cin", "v"), ("cout", "v2", "scan"), ("y",), "body has 3 output.*Loop node 1"),
    (("i", "cin", "v"), ("cout", "v2"), ("y", "ys"), "body has 2 output.*Loop node 2"),
])
def test_loop_body_signature_checked(body_inputs, body_outputs, node_outputs, match):
    with pytest.raises(ConversionError, match="'loop0'.*" + match):
        from_onnx(_loop_model(body_inputs, body_outputs, node_outputs))


def test_valid_loop_with_scan_output_matches_onnxruntime():
    m = _loop_model(("i", "cin", "v"), ("cout", "v2", "scan"), ("y", "ys"))
    feeds = {"x": np.array([1, -2], np.float32)}
    for got, want in zip(_run(m, ["y", "ys"], feeds), _ort(m, feeds)):
        np.testing.assert_array_equal(got, want)


def _scan_model(body_outputs, node_outputs=("sf", "ys"), num_scan_inputs=1, body_inputs=2):
    ins = [vi("s", F, [2]), vi("e", F, [2]), vi("e2", F, [2])][:body_inputs]
    nodes = [helper.make_node("Add", ["s", "e"], ["s2"]),
             helper.make_node("Identity", ["s2"], ["out"])]
    outs = {"s2": vi("s2", F, [2]), "out": vi("out", F, [2])}
    body = helper.make_graph(nodes, "sb", ins, [outs[n] for n in body_outputs])
    return _model([helper.make_node("Scan", ["x", "xs"], list(node_outputs), body=body,
                                    num_scan_inputs=num_scan_inputs, name="scan0")],
                  [vi("x", F, [2]), vi("xs", F, [3, 2])],
                  [vi(o, F, None) for o in node_outputs])


@pytest.mark.parametrize("kwargs, match", [
    ({"body_outputs": ("s2",)}, "body has 1 output.*Scan node 2"),
    ({"body_outputs": ("s2", "out"), "node_outputs": ("sf",)}, "body has 2 output.*node 1"),
    ({"body_outputs": ("s2", "out"), "num_scan_inputs": 3}, "num_scan_inputs = 3.*2 input"),
    ({"body_outputs": ("s2", "out"), "num_scan_inputs": 0}, "num_scan_inputs = 0"),
    ({"body_outputs": ("s2", "out"), "body_inputs": 3}, "body has 3 input"),
])
def test_scan_body_signature_checked(kwargs, match):
    with pytest.raises(ConversionError, match="'scan0'.*" + match):
        from_onnx(_scan_model(**kwargs))


def test_valid_scan_matches_onnxruntime():
    m = _scan_model(("s2", "out"))
    feeds = {"x": np.ones(2, np.float32), "xs": np.arange(6, dtype=np.float32).reshape(3, 2)}
    for got, want in zip(_run(m, ["sf", "ys"], feeds), _ort(m, feeds)):
        np.testing.assert_array_equal(got, want)


# ----------------------------------------------------------------- 7. op schema

@pytest.mark.parametrize("node, opset, match", [
    (helper.make_node("Add", ["x"], ["y"], name="add0"), 17, "'add0'.*1 input.*Add.*takes 2"),
    (helper.make_node("Add", ["x", ""], ["y"], name="add0"), 17,
     r"'add0'.*required input 1 \('B'\).*empty"),
    (helper.make_node("Relu", ["x", "x"], ["y"], name="r"), 17, "'r'.*2 input.*Relu"),
    (helper.make_node("Relu", ["x"], ["y", "z"], name="r"), 17, "'r'.*2 output.*Relu"),
    (helper.make_node("Dropout", ["x"], ["y"], name="d", ratio=0.3), 12,
     r"'d'.*attribute 'ratio' is not defined for Dropout at opset 12"),
    (helper.make_node("Dropout", ["x"], ["y"], name="d", ratio=0.3), 17,
     "'d'.*attribute 'ratio'.*Dropout at opset 17"),
])
def test_node_checked_against_onnx_schema(node, opset, match):
    m = _model([node], [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], opset=opset)
    with pytest.raises(ConversionError, match=match):
        from_onnx(m)


def test_schema_allows_omitted_optional_inputs_and_outputs():
    """Clip with its min omitted and Dropout's mask omitted are valid (vs onnxruntime)."""
    mx = numpy_helper.from_array(np.float32(0.5), "mx")
    m = _model([helper.make_node("Clip", ["x", "", "mx"], ["c"]),
                helper.make_node("Dropout", ["c"], ["y", ""])],
               [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], [mx])
    feeds = {"x": np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)}
    np.testing.assert_array_equal(_run(m, ["y"], feeds)[0], _ort(m, feeds)[0])


def test_dropout_ratio_before_opset_12_is_upgraded_not_refused():
    m = _model([helper.make_node("Dropout", ["x"], ["y"], ratio=0.3)],
               [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], opset=10)
    feeds = {"x": np.ones((2, 3), np.float32)}
    np.testing.assert_array_equal(_run(m, ["y"], feeds)[0], _ort(m, feeds)[0])


# ----------------------------------------------------------------- 8. opset_import

def _relu_model(opsets):
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g",
                          [vi("x", F, [2])], [vi("y", F, [2])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])


@pytest.mark.parametrize("opsets, match", [
    ([("", 17), ("", 11)], r"domain '' \(ai.onnx\) twice.*17 and 11"),
    ([("", 17), ("ai.onnx", 11)], r"domain 'ai.onnx' twice.*17 and 11"),
    ([("com.acme", 1), ("com.acme", 2)], "'com.acme' twice"),
    ([], r"'r' \(Relu\).*default.*no entry"),
    ([("com.acme", 1)], r"'r' \(Relu\).*default.*no entry"),
    ([("", onnx.defs.onnx_opset_version() + 1)], "newer than the installed onnx"),
    ([("", 2 ** 62)], "newer than the installed onnx"),
    ([("", 17), ("ai.onnx.ml", 99)], "'ai.onnx.ml' version 99 is newer"),
])
def test_opset_import_checked(opsets, match):
    with pytest.raises(ConversionError, match=match):
        from_onnx(_relu_model(opsets))
    with pytest.raises(ConversionError, match=match):
        unsupported_ops(_relu_model(opsets))


@pytest.mark.parametrize("opsets", [[("", 17), ("", 17)], [("", 17), ("ai.onnx", 17)],
                                     [("", 17), ("ai.onnx.ml", 3), ("ai.onnx.ml", 3)]])
def test_a_repeated_identical_opset_import_is_one_entry(opsets):
    """skl2onnx writes ('', N) twice in models of ai.onnx.ml ops; onnx's full check and
    onnxruntime accept a repeated identical entry, so the importer counts it once."""
    m = _relu_model(opsets)
    onnx.checker.check_model(m, full_check=True)
    model = from_onnx(m)
    assert model.opset_imports[""] == 17
    x = np.array([-1.0, 2.0], np.float32)
    np.testing.assert_array_equal(og.Session(model).run("y", {"x": x}), [0.0, 2.0])
    back = to_onnx(model)
    assert sorted((o.domain, o.version) for o in back.opset_import
                  if o.domain in ("", "ai.onnx")) == [("", 17)]


def test_no_default_opset_without_default_domain_nodes_is_fine():
    g = helper.make_graph([], "g", [vi("x", F, [2])], [vi("x", F, [2])])
    m = helper.make_model(g, opset_imports=[])
    assert from_onnx(m).opset_imports == {}


# ----------------------------------------------------------------- 9. messages

def test_bad_input_elem_type_names_the_input():
    m = _model([helper.make_node("Relu", ["x"], ["t"]), helper.make_node("Neg", ["t"], ["y"])],
               [vi("x", F, [2])], [vi("y", F, [2])])
    m.graph.input[0].type.tensor_type.elem_type = 99
    m.graph.value_info.append(vi("t", F, [2]))
    m.graph.value_info[0].type.tensor_type.elem_type = 99  # as shape inference copies it
    with pytest.raises(ConversionError, match=r"input 'x'.*element type 99"):
        from_onnx(m)


def test_uninlined_local_function_says_why():
    fn = helper.make_function("local", "F", ["a"], ["b"],
                              [helper.make_node("G", ["a"], ["b"], domain="com.acme")],
                              [helper.make_opsetid("", 17), helper.make_opsetid("com.acme", 2)])
    m = _model([helper.make_node("F", ["x"], ["y"], domain="local", name="call")],
               [vi("x", F, [2])], [vi("y", F, [2])], functions=[fn],
               extra_opsets=[("local", 1), ("com.acme", 1)])
    with pytest.raises(ConversionError, match=r"local::F.*'call'.*model-local function.*"
                                              r"could not be inlined.*com.acme 2.*has 1"):
        from_onnx(m)


def test_local_function_at_another_opset_is_converted_and_inlined():
    fn = helper.make_function("local", "Sp", ["a"], ["b"],
                              [helper.make_node("Softplus", ["a"], ["b"])],
                              [helper.make_opsetid("", 11)])
    m = _model([helper.make_node("Sp", ["x"], ["y"], domain="local")], [vi("x", F, [2])],
               [vi("y", F, [2])], functions=[fn], extra_opsets=[("local", 1)])
    feeds = {"x": np.array([0, 1], np.float32)}
    np.testing.assert_allclose(_run(m, ["y"], feeds)[0], _ort(m, feeds)[0], rtol=1e-6)


def test_untyped_function_at_an_older_opset_is_converted_with_inferred_types():
    """A function written at opset 18 in an opset-23 model, its values untyped (as
    onnxscript writes every function), called on a value the model leaves untyped:
    onnx's inliner converts it only once shape inference has typed the call's values
    ("GetType: Type unknown for t" before, and the import refused the function), so
    the import infers them first (found by the onnxscript sweep)."""
    body = [helper.make_node("Constant", [], ["s"], value_ints=[0, 6, 2]),
            helper.make_node("Reshape", ["x", "s"], ["y"])]
    fn = helper.make_function("custom", "f", ["x"], ["y"], body,
                              [helper.make_opsetid("", 18)])
    m = _model([helper.make_node("f", ["x"], ["t"], domain="custom"),
                helper.make_node("Identity", ["t"], ["out"])], [vi("x", F, [2, 12])],
               [vi("out", F, None)], functions=[fn], opset=23, extra_opsets=[("custom", 1)])
    feeds = {"x": np.arange(24, dtype=np.float32).reshape(2, 12)}
    got = _run(m, ["out"], feeds)[0]
    assert got.shape == (2, 6, 2)
    np.testing.assert_array_equal(got, _ort(m, feeds)[0])


def test_subgraph_output_shadowing_outer_name_is_named():
    then_b = helper.make_graph([helper.make_node("Neg", ["z"], ["x"], name="shadow")], "t", [],
                               [vi("x", F, [2])])
    else_b = helper.make_graph([helper.make_node("Identity", ["x"], ["oe"])], "e", [],
                               [vi("oe", F, [2])])
    m = _model([helper.make_node("If", ["c"], ["y"], then_branch=then_b, else_branch=else_b)],
               [vi("x", F, [2]), vi("z", F, [2]), vi("c", TensorProto.BOOL, [])],
               [vi("y", F, [2])])
    with pytest.raises(ConversionError, match=r"graph 't'.*'shadow'.*output 'x' shadows"):
        from_onnx(m)


def _branch_defining_t(name, op):
    return helper.make_graph([helper.make_node(op, ["x", "x"], ["t"]),
                              helper.make_node("Neg", ["t"], ["o_" + name])],
                             name, [], [vi("o_" + name, F, [2])])


def test_subgraph_may_reuse_a_name_the_outer_graph_defines_later(tmp_path):
    # ONNX scoping is lexical: when the If runs, the main graph's `t` (defined after it)
    # is not in scope, so each branch's own `t` hides nothing. onnx's checker and
    # onnxruntime accept the model; both `t`s must keep their own values.
    m = _model([helper.make_node("If", ["c"], ["y"],
                                 then_branch=_branch_defining_t("then", "Add"),
                                 else_branch=_branch_defining_t("else", "Mul")),
                helper.make_node("Sub", ["y", "x"], ["t"]),
                helper.make_node("Abs", ["t"], ["z"])],
               [vi("c", TensorProto.BOOL, []), vi("x", F, [2])], [vi("z", F, [2])])
    onnx.checker.check_model(m, full_check=True)
    model = from_onnx(m)
    path = str(tmp_path / "m.og")
    og.save(model, path)
    exported = og.convert.to_onnx(og.load(path))
    x = np.array([1.5, -2], np.float32)
    for c in (True, False):
        feeds = {"c": np.array(c), "x": x}
        want = _ort(m, feeds)[0]
        np.testing.assert_allclose(og.Session(model).run(["z"], feeds)[0], want, rtol=1e-6)
        np.testing.assert_allclose(_ort(exported, feeds)[0], want, rtol=1e-6)


def test_subgraph_name_equal_to_its_own_nodes_output_is_not_shadowing():
    # the If's own output is defined by the If: not yet in scope inside its branches
    m = _model([helper.make_node("If", ["c"], ["t"],
                                 then_branch=_branch_defining_t("then", "Add"),
                                 else_branch=_branch_defining_t("else", "Mul"))],
               [vi("c", TensorProto.BOOL, []), vi("x", F, [2])], [vi("t", F, [2])])
    onnx.checker.check_model(m, full_check=True)
    feeds = {"c": np.array(False), "x": np.array([3, -1], np.float32)}
    np.testing.assert_allclose(_run(m, ["t"], feeds)[0], _ort(m, feeds)[0], rtol=1e-6)


def test_subgraph_redefining_an_earlier_outer_value_is_still_refused():
    m = _model([helper.make_node("Relu", ["x"], ["t"]),
                helper.make_node("If", ["c"], ["y"],
                                 then_branch=_branch_defining_t("then", "Add"),
                                 else_branch=_branch_defining_t("else", "Mul"))],
               [vi("c", TensorProto.BOOL, []), vi("x", F, [2])], [vi("y", F, [2])])
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(m, full_check=True)
    with pytest.raises(ConversionError, match=r"output 't' shadows"):
        from_onnx(m)


def test_function_output_never_defined_names_the_function():
    fn = helper.make_function("local", "F", ["a"], ["zzz"],
                              [helper.make_node("Relu", ["a"], ["b"])],
                              [helper.make_opsetid("", 17)])
    m = _model([helper.make_node("F", ["x"], ["y"], domain="local")], [vi("x", F, [2])],
               [vi("y", F, [2])], functions=[fn], extra_opsets=[("local", 1)])
    with pytest.raises(ConversionError, match="function 'local::F': output 'zzz' is not "
                                              "produced"):
        from_onnx(m)


def test_constant_with_a_sparse_value_is_densified():
    """Constant's sparse_value (valid ONNX; onnxruntime runs it) imports as the dense
    constant, as sparse initializers do, and exports as a plain `value`."""
    from onegraph.convert import to_onnx

    values = helper.make_tensor("v", TensorProto.FLOAT, [2], [1.5, -2.0])
    indices = helper.make_tensor("i", TensorProto.INT64, [2], [1, 4])  # linear indices
    constant = helper.make_node("Constant", [], ["c"], sparse_value=helper.make_sparse_tensor(
        values, indices, [2, 3]))
    model = helper.make_model(helper.make_graph(
        [constant, helper.make_node("Add", ["x", "c"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])]),
        opset_imports=[helper.make_opsetid("", 17)])
    dense = np.zeros(6, np.float32)
    dense[[1, 4]] = [1.5, -2.0]
    x = np.ones((2, 3), np.float32)
    want = x + dense.reshape(2, 3)
    imported = from_onnx(model)
    np.testing.assert_array_equal(og.Session(imported).run(["y"], {"x": x})[0], want)
    proto = to_onnx(imported)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], want)


def test_training_info_is_not_dropped_silently():
    """ONNX's TrainingInfoProto has no counterpart in onegraph: importing warns."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    info = model.training_info.add()
    info.algorithm.CopyFrom(helper.make_graph([], "algorithm", [], []))
    with pytest.warns(UserWarning, match=r"training_info \(1 entry\) is not imported"):
        imported = from_onnx(model)
    np.testing.assert_array_equal(
        og.Session(imported).run(["y"], {"x": np.array([-1.0, 2.0], np.float32)})[0],
        [0.0, 2.0])


@pytest.mark.parametrize("attrs, match", [
    ({}, r"got none"),
    ({"value_float": 1.0, "value_int": 2}, r"got \['value_float', 'value_int'\]"),
])
def test_constant_without_exactly_one_value_is_refused_at_import(attrs, match):
    m = _model([helper.make_node("Constant", [], ["y"], **attrs)], [], [vi("y", F, None)])
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(m)
    with pytest.raises(ConversionError, match=r"node 0 \(Constant\).*exactly one of .*" + match):
        from_onnx(m)


def test_constant_of_shape_value_must_hold_one_element():
    fill = numpy_helper.from_array(np.array([1, 2], np.float32))
    m = _model([helper.make_node("ConstantOfShape", ["s"], ["y"], value=fill)],
               [vi("s", TensorProto.INT64, [1])], [vi("y", F, None)])
    with pytest.raises(Exception, match="single-element"):
        _ort(m, {"s": np.array([3], np.int64)})
    with pytest.raises(ConversionError, match=r"ConstantOfShape.*'value' must be a "
                                              r"one-element tensor, got shape \[2\]"):
        from_onnx(m)


def test_element_type_the_op_does_not_take_is_refused_at_import():
    """PyTorch's exporter writes CumSum on bools for torch.cumsum(x > 0); onnxruntime
    and the checker refuse it, and the kernel ran it as a running OR."""
    axis = numpy_helper.from_array(np.array(1, np.int32), "ax")
    m = _model([helper.make_node("CumSum", ["b", "ax"], ["y"])],
               [vi("b", TensorProto.BOOL, [2, 5])], [vi("y", TensorProto.BOOL, [2, 5])],
               initializers=[axis])
    with pytest.raises(Exception, match="INVALID_GRAPH"):
        _ort(m, {"b": np.ones((2, 5), bool)})
    with pytest.raises(ConversionError, match=r"an unnamed node \(CumSum\): input 0 \('b'\) "
                                              r"is bool, which CumSum does not take at "
                                              r"opset 17 \(it takes .*float.*int64"):
        from_onnx(m)


def test_element_types_inside_subgraphs_are_checked_too():
    body = helper.make_graph([helper.make_node("Abs", ["s"], ["o"], name="in_branch")],
                             "then", [], [vi("o", TensorProto.STRING, [1])])
    other = helper.make_graph([helper.make_node("Identity", ["s"], ["o2"])], "else", [],
                              [vi("o2", TensorProto.STRING, [1])])
    m = _model([helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=other)],
               [vi("c", TensorProto.BOOL, []), vi("s", TensorProto.STRING, [1])],
               [vi("y", TensorProto.STRING, [1])])
    with pytest.raises(ConversionError, match=r"node 'in_branch' \(Abs\): input 0 \('s'\) "
                                              r"is string"):
        from_onnx(m)


def test_element_types_are_looked_up_per_scope():
    """Sibling branches may each define a name with their own type, and a branch may
    define a name the main graph defines later with another type: both are valid (the
    checker and onnxruntime accept them) and must import."""
    then_b = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["t"], to=TensorProto.FLOAT),
         helper.make_node("Sin", ["t"], ["o1"])], "then", [], [vi("o1", F, [1])])
    else_b = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["t"], to=TensorProto.INT64),
         helper.make_node("Cast", ["t"], ["o2"], to=TensorProto.FLOAT)], "else", [],
        [vi("o2", F, [1])])
    m = _model([helper.make_node("If", ["c"], ["y"], then_branch=then_b, else_branch=else_b),
                helper.make_node("Shape", ["y"], ["t"]),
                helper.make_node("Cast", ["t"], ["z"], to=TensorProto.FLOAT)],
               [vi("c", TensorProto.BOOL, []), vi("x", F, [1])],
               [vi("y", F, [1]), vi("z", F, [1])])
    m = onnx.shape_inference.infer_shapes(m)  # types every branch's t, as exporters do
    onnx.checker.check_model(m, full_check=True)
    for c in (True, False):
        feeds = {"c": np.array(c), "x": np.array([2.5], np.float32)}
        for got, want in zip(_run(m, ["y", "z"], feeds), _ort(m, feeds)):
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_constant_with_value_and_sparse_value_is_refused():
    """The spec asks for exactly one value attribute; with both, the sparse one took
    `value`'s place silently (onnxruntime quietly uses `value`)."""
    sparse = helper.make_sparse_tensor(
        numpy_helper.from_array(np.array([5], np.float32), "v"),
        numpy_helper.from_array(np.array([1], np.int64), "i"), [3])
    node = helper.make_node("Constant", [], ["y"],
                            value=numpy_helper.from_array(np.array([1, 2, 3], np.float32)))
    node.attribute.append(helper.make_attribute("sparse_value", sparse))
    m = _model([node], [], [vi("y", F, [3])])
    with pytest.raises(ConversionError, match=r"node 0 \(Constant\): Constant: exactly one "
                                              r"of its value attributes must be given, got "
                                              r"sparse_value and \['value'\]"):
        from_onnx(m)


@pytest.mark.parametrize("opset", [11, 17])
def test_unsupported_ops_are_one_listing_at_any_opset(opset):
    """Below opset 13 the model goes through ONNX's version converter, which stops at
    the first op it has no schema for with its own (unformatted) assertion; the error
    is the same listing of every unsupported op as at newer opsets, subgraphs too."""
    then_g = helper.make_graph([helper.make_node("Frobnicate", ["x"], ["t"])], "then", [],
                               [vi("t", F, [2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                               [vi("e", F, [2])])
    nodes = [helper.make_node("Reluu", ["x"], ["a"]),
             helper.make_node("Foo", ["a"], ["b"], domain="com.ex"),
             helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    m = _model(nodes, [vi("x", F, [2]), vi("c", TensorProto.BOOL, [])], [vi("y", F, [2])],
               opset=opset, extra_opsets=[("com.ex", 1)])
    with pytest.raises(ConversionError, match=r"^3 unsupported op type\(s\): Reluu x1 .*"
                                              r"com\.ex::Foo x1 .*Frobnicate x1"):
        from_onnx(m)
    assert set(unsupported_ops(m)) == {"Reluu", "com.ex::Foo", "Frobnicate"}


def test_unsupported_ops_of_an_old_model_leave_its_local_functions_out():
    """The listing made when the version converter stops is of ops onegraph lacks; a
    call to one of the model's own functions is not one."""
    body = [helper.make_node("Neg", ["a"], ["b"])]
    f = helper.make_function("custom", "F", ["a"], ["b"], body,
                             [helper.make_opsetid("", 10)])
    nodes = [helper.make_node("ImageScaler", ["x"], ["s"], scale=2.0, name="scaler"),
             helper.make_node("F", ["s"], ["y"], domain="custom")]
    m = _model(nodes, [vi("x", F, [1, 1, 2, 2])], [vi("y", F, [1, 1, 2, 2])], opset=10,
               functions=[f], extra_opsets=[("custom", 1)])
    assert unsupported_ops(m) == {"ImageScaler": (1, "scaler")}
    with pytest.raises(ConversionError, match=r"^1 unsupported op type\(s\): ImageScaler"):
        from_onnx(m)


def _dequantize_with_axis(opset: int) -> onnx.ModelProto:
    """DequantizeLinear with a per-axis scale and `axis`, which only opset 13 defines
    (onnxruntime's quantizer writes it into opset-11 models with per_channel)."""
    node = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=0)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.INT8, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.array([0.5, 2.0], np.float32), "s"),
         numpy_helper.from_array(np.array([0, 0], np.int8), "z")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model


def test_an_attribute_the_models_opset_does_not_define_is_refused_before_upgrading():
    old = _dequantize_with_axis(11)
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(old)
    with pytest.raises(Exception, match="axis"):
        ort.InferenceSession(old.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(ConversionError, match=r"node .* \(DequantizeLinear\) attribute "
                                              r"'axis' is not defined for DequantizeLinear "
                                              r"at opset 11"):
        from_onnx(old)
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int8)
    got = og.Session(from_onnx(_dequantize_with_axis(13))).run(["y"], {"x": x})[0]
    np.testing.assert_array_equal(got, x * np.array([[0.5], [2.0]], np.float32))


def test_a_newer_ir_version_and_a_later_opsets_input_count_are_refused():
    relu = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    future = helper.make_model(relu, opset_imports=[helper.make_opsetid("", 17)])
    future.ir_version = 99   # onnx's checker and onnxruntime refuse it too
    with pytest.raises(ConversionError, match=r"IR version 99 is newer than the "
                                              r"installed onnx's \(\d+\)"):
        from_onnx(future)
    # opset 13's Unsqueeze (axes as an input) in an opset-12 model, where axes is an
    # attribute and the op takes one input
    unsqueeze = helper.make_graph(
        [helper.make_node("Unsqueeze", ["x", "a"], ["y"], name="u")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])],
        [numpy_helper.from_array(np.array([0], np.int64), "a")])
    old = helper.make_model(unsqueeze, opset_imports=[helper.make_opsetid("", 12)])
    old.ir_version = 7
    with pytest.raises(Exception):
        ort.InferenceSession(old.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(ConversionError, match=r"node 'u' \(Unsqueeze\) has 2 input\(s\), "
                                              r"but Unsqueeze at opset 12 takes 1"):
        from_onnx(old)

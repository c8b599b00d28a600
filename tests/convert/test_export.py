"""to_onnx: hand-built models, external data, opset targets, QDQ, refused ops."""

import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from onegraph.convert import from_onnx, to_onnx
from onegraph.errors import ConversionError
from onegraph.format import Graph, Model, Quantization


def _mlp(size=4):
    rng = np.random.default_rng(0)
    g = Graph("mlp")
    x = g.add_input("x", "float32", [-1, size])
    w = g.add_constant("W", rng.standard_normal((size, 3)).astype(np.float32))
    b = g.add_constant("b", np.zeros(3, np.float32))
    (h,) = g.add_node("MatMul", [x, w], ["h"])
    (z,) = g.add_node("Add", [h, b], ["z"])
    (y,) = g.add_node("Relu", [z], ["y"])
    g.outputs = [y]
    model = Model(graphs=[g], opset_imports={"": 17})
    model.add_signature("serving", inputs={"x": x}, outputs={"y": y})
    return model


def _ort(proto_or_path, feeds, optimize=True):
    src = proto_or_path if isinstance(proto_or_path, str) else \
        proto_or_path.SerializeToString()
    opts = ort.SessionOptions()
    if not optimize:  # keep ORT from fusing DQ+MatMul into its own int8 kernels
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(src, opts, providers=["CPUExecutionProvider"]).run(
        None, feeds)


def test_hand_built_model_runs_in_ort():
    from onegraph.train.session import Session

    model = _mlp()
    proto = to_onnx(model)
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    (want,) = Session(model).run(["y"], {"x": x})
    np.testing.assert_allclose(_ort(proto, {"x": x})[0], want, rtol=1e-5, atol=1e-6)
    assert proto.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT


def test_opset_target():
    model = _mlp()
    model.opset_imports[""] = 13
    for target in (13, 17, 21):
        proto = to_onnx(model, opset=target)
        assert [o.version for o in proto.opset_import if o.domain == ""] == [target]
    x = np.ones((1, 4), np.float32)
    np.testing.assert_allclose(_ort(to_onnx(model, opset=21), {"x": x})[0],
                               _ort(to_onnx(model), {"x": x})[0])


def test_older_opset_target():
    """Add and Relu changed at opset 14 only in types: the float MLP goes to 13
    (onnx's converter alone refuses it; see test_export_older_opset.py)."""
    proto = to_onnx(_mlp(), opset=13)
    assert [o.version for o in proto.opset_import if o.domain == ""] == [13]
    x = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(_ort(proto, {"x": x})[0], _ort(to_onnx(_mlp()), {"x": x})[0])


def test_external_data_written_next_to_path(tmp_path):
    path = tmp_path / "big.onnx"
    to_onnx(_mlp(64), path, external_data_threshold=100)
    data_file = tmp_path / "big.onnx.data"
    assert data_file.exists() and data_file.stat().st_size >= 64 * 3 * 4
    x = np.ones((1, 64), np.float32)
    want = _ort(to_onnx(_mlp(64)), {"x": x})[0]
    np.testing.assert_allclose(_ort(str(path), {"x": x})[0], want, rtol=1e-6)
    # and it imports back from inside its folder
    model = from_onnx(str(path))
    np.testing.assert_array_equal(model.graph.tensor("W").data, _mlp(64).graph.tensor("W").data)


def _scaled_mlp(scale):
    model = _mlp(64)
    w = model.graph.tensor("W")
    w.data = (w.data * scale).astype(np.float32)
    return model


def _weights_at(path):
    return from_onnx(str(path)).graph.tensor("W").data


def test_external_data_overwrite_switches_model_and_data_together(tmp_path):
    """Overwriting a model with external data never pairs the old model with new data:
    the new data goes to the name the old model does not read, the model's rename
    switches both, and the old data file is removed."""
    path = tmp_path / "big.onnx"
    names = []
    for scale in (1.0, 2.0, 3.0):
        to_onnx(_scaled_mlp(scale), path, external_data_threshold=100)
        np.testing.assert_array_equal(_weights_at(path), _scaled_mlp(scale).graph.tensor("W").data)
        names.append(sorted(os.listdir(tmp_path)))
    assert names == [["big.onnx", "big.onnx.data"], ["big.onnx", "big.onnx.1.data"],
                     ["big.onnx", "big.onnx.data"]]


@pytest.mark.parametrize("failure", ["interrupt", "checker"])
def test_external_data_export_that_fails_leaves_the_old_pair(tmp_path, monkeypatch, failure):
    """An interrupt before the model's rename, or a checker refusal of the written
    files, leaves the old model reading its old data, and no new file behind."""
    from onegraph.convert import onnx_export
    from onegraph.format import atomic

    path = tmp_path / "big.onnx"
    to_onnx(_scaled_mlp(1.0), path, external_data_threshold=100)
    before = sorted(os.listdir(tmp_path))
    if failure == "interrupt":  # after the new data file, before the model's rename
        def commit(self):
            raise KeyboardInterrupt
        monkeypatch.setattr(atomic.AtomicFiles, "commit", commit)
        expected = KeyboardInterrupt
    else:
        def refuse(proto_or_path, explanation=""):
            raise ConversionError("exported model fails the ONNX checker: test")
        monkeypatch.setattr(onnx_export, "_check", refuse)
        expected = ConversionError
    with pytest.raises(expected):
        to_onnx(_scaled_mlp(2.0), path, external_data_threshold=100)
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == before
    np.testing.assert_array_equal(_weights_at(path), _scaled_mlp(1.0).graph.tensor("W").data)


def test_inline_export_over_an_external_one_removes_its_data_file(tmp_path):
    """The replaced model's data file is nobody's once the weights are inline; a file
    of another name next to it is left alone."""
    path = tmp_path / "m.onnx"
    (tmp_path / "notes.data").write_bytes(b"mine")
    to_onnx(_scaled_mlp(1.0), path, external_data_threshold=100)
    assert sorted(os.listdir(tmp_path)) == ["m.onnx", "m.onnx.data", "notes.data"]
    to_onnx(_scaled_mlp(2.0), path)
    assert sorted(os.listdir(tmp_path)) == ["m.onnx", "notes.data"]
    np.testing.assert_array_equal(_weights_at(path), _scaled_mlp(2.0).graph.tensor("W").data)


def test_small_model_stays_inline(tmp_path):
    path = tmp_path / "small.onnx"
    to_onnx(_mlp(), path)
    assert not (tmp_path / "small.onnx.data").exists()


def test_onegraph_domain_ops_listed():
    g = Graph("g")
    x = g.add_input("x", "float32", [2])
    (a,) = g.add_node("Enqueue", [x], ["a"], domain="onegraph", name="enq")
    (b,) = g.add_node("Switch", [a, x], ["b"], domain="onegraph", name="sw1")
    (c,) = g.add_node("Switch", [b, x], ["c"], domain="onegraph", name="sw2")
    g.outputs = [c]
    with pytest.raises(ConversionError) as info:
        to_onnx(Model(graphs=[g], opset_imports={"": 17}))
    msg = str(info.value)
    assert "onegraph::Enqueue x1" in msg and "onegraph::Switch x2" in msg and "sw1" in msg


def test_other_runtimes_ops_are_written_as_they_are(monkeypatch):
    """A com.microsoft op onegraph has no definition of (imported with check_ops=False,
    or added in Python without an opset import) is exported as it is, with its domain's
    opset import, and the model runs in onnxruntime; only onegraph's own domains are
    refused. onegraph defines nearly every com.microsoft op that onnxruntime runs on
    CPU, so the test hides one (MaxpoolWithMask) from the registry: it then stands for
    any op of another runtime."""
    from onnx import TensorProto, helper

    from onegraph.ops import REGISTRY

    monkeypatch.delitem(REGISTRY._ops, ("com.microsoft", "MaxpoolWithMask"))
    assert not REGISTRY.has("MaxpoolWithMask", "com.microsoft")
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["a"]),
         helper.make_node("MaxpoolWithMask", ["a", "mask"], ["y"], domain="com.microsoft",
                          kernel_shape=[2, 2])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2]),
              helper.make_tensor_value_info("mask", TensorProto.INT32, [1, 1, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1, 1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    feeds = {"x": np.array([[[[1, -2], [3, 4]]]], np.float32),
             "mask": np.ones((1, 1, 2, 2), np.int32)}
    for check in (True, False):
        proto = to_onnx(from_onnx(m, check_ops=False), check=check)
        assert {o.domain: o.version for o in proto.opset_import}["com.microsoft"] == 1
        np.testing.assert_array_equal(_ort(proto, feeds)[0], [[[[4.0]]]])

    built = Graph("g")
    x = built.add_input("x", "float32", [1, 1, 2, 2])
    mask = built.add_input("mask", "int32", [1, 1, 2, 2])
    (y,) = built.add_node("MaxpoolWithMask", [x, mask], ["y"], {"kernel_shape": [2, 2]},
                          domain="com.microsoft")
    built.tensors[y].dtype, built.tensors[y].shape = built.tensors[x].dtype, [1, 1, 1, 1]
    built.outputs = [y]
    proto = to_onnx(Model(graphs=[built], opset_imports={"": 17}))
    assert {o.domain: o.version for o in proto.opset_import}["com.microsoft"] == 1
    np.testing.assert_array_equal(_ort(proto, feeds)[0], [[[[4.0]]]])


def test_quantized_weight_exports_as_qdq():
    g = Graph("q")
    x = g.add_input("x", "float32", [1, 4])
    wq = np.array([[10, -20, 30], [0, 5, -5], [127, -128, 1], [3, 3, 3]], np.int8)
    w = g.add_constant("W", wq)
    g.tensors[w].quantization = Quantization(scale=[0.05], zero_point=[0])
    (y,) = g.add_node("MatMul", [x, w], ["y"])
    g.tensors[y].dtype = g.tensors[x].dtype
    g.outputs = [y]
    proto = to_onnx(Model(graphs=[g], opset_imports={"": 17}))
    assert "DequantizeLinear" in [n.op_type for n in proto.graph.node]
    xv = np.arange(4, dtype=np.float32).reshape(1, 4)
    np.testing.assert_allclose(_ort(proto, {"x": xv}, optimize=False)[0],
                               xv @ (wq.astype(np.float32) * 0.05), rtol=1e-5)


def test_if_subgraph_with_outer_scope_roundtrip():
    """An If whose branches read an outer tensor by name survives export and import."""
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
    c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
    then_out = helper.make_tensor_value_info("t", TensorProto.FLOAT, [3])
    else_out = helper.make_tensor_value_info("e", TensorProto.FLOAT, [3])
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [],
                               [then_out])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                               [else_out])
    node = helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)
    m = helper.make_model(helper.make_graph([node], "g", [c, x], [y]),
                          opset_imports=[helper.make_opsetid("", 17)])
    proto = to_onnx(from_onnx(m))
    xv = np.array([-1, 0, 2], np.float32)
    for cond in (True, False):
        feeds = {"x": xv, "c": np.array(cond)}
        np.testing.assert_array_equal(_ort(proto, feeds)[0], _ort(m, feeds)[0])


def test_ops_of_other_onnx_domains_get_their_opset_import():
    """A graph built in Python with ai.onnx.ml ops (no opset imports of its own) exports
    with an ai.onnx.ml import new enough for every op it uses, and runs in onnxruntime."""
    import onnxruntime as ort

    from onegraph.format import Graph, Model

    g = Graph("main")
    x = g.add_input("x", np.float32, (2, 3))
    (b,) = g.add_node("Binarizer", [x], ["b"], {"threshold": 0.5}, domain="ai.onnx.ml")
    (y,) = g.add_node("LabelEncoder", [b], ["y"], {"keys_floats": [0.0, 1.0],
                                                  "values_floats": [-1.0, 1.0]},
                      domain="ai.onnx.ml")
    g.outputs = [y]
    proto = to_onnx(Model(graphs=[g]))
    assert {o.domain: o.version for o in proto.opset_import}["ai.onnx.ml"] == 4
    xv = np.array([[0, 1, .4], [.6, .5, 2]], np.float32)
    (got,) = ort.InferenceSession(proto.SerializeToString(),
                                  providers=["CPUExecutionProvider"]).run(None, {"x": xv})
    np.testing.assert_array_equal(got, np.where(xv > 0.5, 1.0, -1.0))


@pytest.mark.parametrize("opset", [0, -1, 10 ** 6, 1.5, True])
def test_opset_out_of_range_is_named(opset):
    with pytest.raises(ConversionError, match="opset must be an integer from 1 to"):
        to_onnx(_mlp(), opset=opset)


@pytest.mark.parametrize("target", [11, 12, 13, 14, 17, 21, onnx.defs.onnx_opset_version()])
def test_ir_version_is_the_one_the_opset_needs(target):
    """The lowest IR version that has the opset: a runtime of opset 11's time (IR 6)
    reads an export at opset 11."""
    proto = to_onnx(_mlp(), opset=target)
    need = onnx.helper.find_min_ir_version_for(list(proto.opset_import), ignore_unknown=True)
    assert proto.ir_version == max(need, 4)
    assert proto.ir_version == {11: 6, 12: 7, 13: 7, 14: 7}.get(target, proto.ir_version)
    onnx.checker.check_model(proto, full_check=True)


def test_optional_types_need_ir_8_even_at_an_older_opset():
    """Optional types came with IR 8: a graph that uses one is IR 8 whatever its opset
    alone would allow (opset 15 is the first with optionals, whose own IR is 8, so the
    rule shows on a value_info that the export keeps)."""
    from onnx import TensorProto, helper

    from onegraph.convert.onnx_export import _ir_version_for

    opt = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    assert _ir_version_for(m) == 7
    g.value_info.append(helper.make_value_info("unused", opt))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    assert _ir_version_for(m) == 8


@pytest.mark.parametrize("threshold", [None, 100])
def test_failed_write_leaves_the_old_file(tmp_path, monkeypatch, threshold):
    """A write that fails midway (a full disk) keeps the previous export whole."""
    import onegraph.format.atomic as atomic

    path = tmp_path / "m.onnx"
    kwargs = {} if threshold is None else {"external_data_threshold": threshold}
    to_onnx(_mlp(64), path, **kwargs)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", full_disk)
    with pytest.raises(ConversionError, match="No space left"):
        to_onnx(_mlp(64), path, **kwargs)
    monkeypatch.undo()
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert after == before  # no temp files left, nothing replaced
    x = np.ones((1, 64), np.float32)
    np.testing.assert_allclose(_ort(str(path), {"x": x})[0],
                               _ort(to_onnx(_mlp(64)), {"x": x})[0], rtol=1e-6)


def _graph_with(op_type, w_shape):
    g = Graph("main")
    x = g.add_input("x", "float32", [-1, 4])
    w = g.add_constant("w", np.ones(w_shape, np.float32))
    (q,) = g.add_node(op_type, [x, w], ["q"])
    (r,) = g.add_node(op_type, [q, g.add_constant("w2", np.ones((2, 2), np.float32))],
                      ["r"])
    g.outputs = [r]
    return Model(graphs=[g], opset_imports={"": 21})


def test_ops_onnx_does_not_define_are_one_named_error():
    # a misspelt op saves (the file may hold any op) but is no ONNX: before, the
    # checker's "Unrecognized type value case (value_info name: q): 0" was all it said
    model = _graph_with("MatMull", (4, 2))
    with pytest.raises(ConversionError, match=r"ops that ONNX does not define \(default-"
                                              r"domain opset 21\): MatMull x2 \(first: "
                                              r"node 'MatMull_0'\)"):
        to_onnx(model)
    assert to_onnx(model, check=False).graph.node[0].op_type == "MatMull"


def test_checker_refusal_names_the_node_onegraph_inference_refuses():
    with pytest.raises(ConversionError, match=r"fails the ONNX checker.*onegraph's shape "
                                              r"inference refuses graph 'main' node "
                                              r"'MatMul_0' \(MatMul\): MatMul: inner dims"):
        to_onnx(_graph_with("MatMul", (3, 2)))


def test_output_rank_the_inference_contradicts_is_named():
    """PyTorch declares x.mean(dim=[]) as rank 2 though it is a scalar: the original
    fails onnx's checker, and the export says why instead of 'unknown rank'."""
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("ReduceMean", ["x"], ["m"], keepdims=0)], "g",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])],
        [onnx.helper.make_tensor_value_info("m", onnx.TensorProto.FLOAT, ["a", "b"])])
    original = onnx.helper.make_model(graph,
                                      opset_imports=[onnx.helper.make_opsetid("", 17)])
    with pytest.raises(Exception, match="Inferred shape and existing shape differ"):
        onnx.checker.check_model(original, full_check=True)
    model = from_onnx(original)
    with pytest.raises(ConversionError, match=r"graph output 'm': the model states rank 2, "
                                              r"but ONNX's shape inference finds rank 0"):
        to_onnx(model)
    exported = to_onnx(model, check=False)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (got,) = ort.InferenceSession(exported.SerializeToString(),
                                  providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert got.shape == () and got == 2.5


@pytest.mark.parametrize("source_opset", [9, 13, 18])
def test_mean_variance_normalization_at_its_default_axes_exports(source_opset):
    """The checker's full check expands MVN's function body, which reads `axes`: left
    at its default it was an empty Constant and the export failed the check."""
    from onnx import TensorProto, helper

    g = helper.make_graph(
        [helper.make_node("MeanVarianceNormalization", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4, 5])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", source_opset)])
    m.ir_version = 7
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    proto = to_onnx(from_onnx(m))
    np.testing.assert_allclose(_ort(proto, {"x": x})[0], _ort(m, {"x": x})[0],
                               rtol=1e-5, atol=1e-5)


def test_nodes_listed_out_of_order_export_sorted():
    """onnxruntime (and the Session) run a graph whose nodes are not in topological
    order; ONNX requires the order, so the export sorts them."""
    from onnx import TensorProto, helper

    g = helper.make_graph([helper.make_node("Relu", ["a"], ["y"]),
                           helper.make_node("Neg", ["x"], ["a"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    proto = to_onnx(from_onnx(m))
    assert [n.op_type for n in proto.graph.node] == ["Neg", "Relu"]
    x = np.array([-1.0, 2.0], np.float32)
    np.testing.assert_array_equal(_ort(proto, {"x": x})[0], [1.0, 0.0])


def test_anonymous_dims_stay_anonymous_through_the_round_trip():
    """ONNX's shape inference names unknown dims "unk__N"; those are not the model's
    names and do not come back out of an export (a model's own "unk__7" does)."""
    from onnx import TensorProto, helper

    def dims(v):
        return [d.dim_param if d.HasField("dim_param") else
                d.dim_value if d.HasField("dim_value") else None
                for d in v.type.tensor_type.shape.dim]

    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, "unk__7", None])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, "unk__7", None])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    proto = to_onnx(from_onnx(m))
    assert dims(proto.graph.input[0]) == [None, "unk__7", None]
    assert dims(proto.graph.output[0]) == [None, "unk__7", None]
    assert all(not (d.dim_param.startswith("unk__") and d.dim_param != "unk__7")
               for v in proto.graph.value_info for d in v.type.tensor_type.shape.dim)


def test_a_node_whose_branch_reads_a_later_listed_value_exports_after_it():
    """An If listed before the node producing a value its branch reads by name: the
    export orders by those outer-scope reads too."""
    from onnx import TensorProto, helper

    def vi(name, shape, elem=TensorProto.FLOAT):
        return helper.make_tensor_value_info(name, elem, shape)

    then_g = helper.make_graph([helper.make_node("Identity", ["t"], ["o1"])], "then", [],
                               [vi("o1", [2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["t"], ["o2"])], "else", [],
                               [vi("o2", [2])])
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Relu", ["x"], ["t"])], "g",
        [vi("x", [2]), vi("c", [], TensorProto.BOOL)], [vi("y", [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    proto = to_onnx(from_onnx(m))
    assert [n.op_type for n in proto.graph.node] == ["Relu", "If"]
    x = np.array([1.0, -2.0], np.float32)
    for c, want in ((True, [1.0, 0.0]), (False, [-1.0, 0.0])):
        np.testing.assert_array_equal(_ort(proto, {"x": x, "c": np.array(c)})[0], want)

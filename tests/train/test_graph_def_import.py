"""og.import_graph_def against TF: frozen GraphDefs and outputs recorded by
tools/record_tf_graph_def.py (TF 2.21, tf.compat.v1)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ConversionError, DataLossError
from onegraph.train.graph_def import AttrValue, GraphDef, NodeDef
from onegraph.train.graph_def_import import import_graph_def

DATA = os.path.join(os.path.dirname(__file__), "data", "tf_graph_defs")


def _load(name):
    with open(os.path.join(DATA, name + ".pb"), "rb") as f:
        graph_def = GraphDef.FromString(f.read())
    ref = np.load(os.path.join(DATA, name + ".npz"))
    return graph_def, ref, [str(s) for s in ref["feeds"]], [str(s) for s in ref["fetches"]]


def _check(got, want, what):
    assert got.shape == want.shape, what
    assert got.dtype == want.dtype, what
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


@pytest.mark.parametrize("name", ["cnn_nhwc", "cnn_nchw", "mlp", "shapes"])
def test_imported_graph_matches_tf(name):
    graph_def, ref, feeds, fetches = _load(name)
    with og.Graph().as_default():
        outs = import_graph_def(graph_def, return_elements=fetches + feeds)
        tensors, placeholders = outs[:len(fetches)], outs[len(fetches):]
        feed = {p: ref[f"in_{i}"] for i, p in enumerate(placeholders)}
        with og.Session() as sess:
            got = sess.run(tensors, feed)
    assert len(got) == len(fetches) > 0
    for i, fetch in enumerate(fetches):
        _check(np.asarray(got[i]), ref[f"out_{i}"], f"{name} {fetch}")


def test_nodes_in_any_order():
    graph_def, ref, feeds, fetches = _load("mlp")
    graph_def.node.reverse()    # TF GraphDefs need not be topologically sorted
    with og.Graph().as_default():
        x, y, h = import_graph_def(graph_def, return_elements=feeds + [fetches[0]])
        with og.Session() as sess:
            got = sess.run(h, {x: ref["in_0"], y: ref["in_1"]})
    _check(got, ref["out_0"], "h")


@pytest.mark.parametrize("key", ["x:0", "x"])
def test_input_map_replaces_the_placeholder(key):
    graph_def, ref, feeds, fetches = _load("mlp")
    with og.Graph().as_default():
        y = og.placeholder(og.float32, [None, 4], name="outer_y")
        x = og.constant(ref["in_0"])
        h, e2 = import_graph_def(graph_def, input_map={key: x, "y:0": y},
                                 return_elements=["h:0", "e2:0"])
        with og.Session() as sess:
            got_h, got_e2 = sess.run([h, e2], {y: ref["in_1"]})
    _check(got_h, ref["out_0"], "h")
    _check(got_e2, ref["out_3"], "e2 = x * y")


def test_return_elements_tensor_and_operation():
    graph_def, _, _, _ = _load("mlp")
    with og.Graph().as_default() as g:
        assert import_graph_def(graph_def) is None
        t, op = import_graph_def(graph_def, return_elements=["e0:0", "e0"])
        assert isinstance(t, og.Tensor) and isinstance(op, og.Operation)
        assert op.name == "import_1/e0"      # TF's unique scope for a second import
        assert t.op.name == op.name
        assert g.get_operation_by_name("import/e0") is not None


@pytest.mark.parametrize("scope, prefix", [(None, "import/"), ("", ""), ("net", "net/")])
def test_name_scope(scope, prefix):
    graph_def, _, _, _ = _load("mlp")
    with og.Graph().as_default() as g:
        op, = import_graph_def(graph_def, return_elements=["m_einsum"], name=scope)
        assert op.name == prefix + "m_einsum"
        assert g.get_tensor_by_name(prefix + "x").dtype == og.float32


def test_control_inputs_are_kept():
    graph_def, _, _, _ = _load("shapes")
    node = next(n for n in graph_def.node if "^before" in n.input)
    with og.Graph().as_default():
        op, before = import_graph_def(graph_def, return_elements=[node.name, "before"])
        assert before.type == "NoOp"
        assert [c.name for c in op.control_inputs] == ["import/before"]


def _unsupported():
    """The "unsupported" recording with its MatrixDeterminant (which og imports since
    session 53) renamed to an op type no converter has."""
    graph_def, _, _, _ = _load("unsupported")
    for node in graph_def.node:
        if node.op == "MatrixDeterminant":
            node.op = "NoSuchDeterminant"
    return graph_def


def test_unsupported_ops_are_listed_together():
    # the recording holds a cond (control flow v1 imports since session 53) and a
    # determinant given an unknown op type; two more nodes get op types og lacks
    graph_def = _unsupported()
    movable = [n for n in graph_def.node if n.op in ("Switch", "Merge")]
    movable[0].op, movable[1].op = "TensorListReserve", "NoSuchOp"
    with og.Graph().as_default():
        with pytest.raises(ConversionError) as info:
            import_graph_def(graph_def)
    text = str(info.value)
    for op in ("NoSuchDeterminant", "TensorListReserve", "NoSuchOp"):
        assert op in text
    assert "3 unsupported op type(s)" in text
    graph_def = _unsupported()
    with og.Graph().as_default():
        with pytest.raises(ConversionError, match=r"1 unsupported op type\(s\): "
                                                  r"NoSuchDeterminant"):
            import_graph_def(graph_def)


def test_bad_input_map_key():
    graph_def, _, _, _ = _load("mlp")
    with og.Graph().as_default():
        with pytest.raises(ConversionError, match="not found in graph_def.*'nope:0'"):
            import_graph_def(graph_def, input_map={"nope:0": og.constant(1.0)})


def test_bad_return_element():
    graph_def, _, _, _ = _load("mlp")
    with og.Graph().as_default():
        with pytest.raises(ConversionError, match="return element 'h:3'"):
            import_graph_def(graph_def, return_elements=["h:3"])
        with pytest.raises(ConversionError, match="return element 'missing'"):
            import_graph_def(graph_def, return_elements=["missing"])


def test_corrupt_bytes():
    with open(os.path.join(DATA, "mlp.pb"), "rb") as f:
        data = f.read()
    with pytest.raises(DataLossError, match="cannot parse GraphDef"):
        GraphDef.FromString(data[:-7])
    with pytest.raises(DataLossError):
        GraphDef.FromString(b"\x0a\xff\xff\x03abc")
    with pytest.raises(TypeError):
        GraphDef.FromString("not bytes")


def _node(name, op, inputs=(), **attrs):
    return NodeDef(name=name, op=op, input=list(inputs),
                   attr={k: AttrValue(kind, v) for k, (kind, v) in attrs.items()})


def test_missing_input_and_cycle():
    f32 = ("type", 1)
    with og.Graph().as_default():
        gd = GraphDef([_node("a", "Identity", ["ghost"], T=f32)])
        with pytest.raises(ConversionError, match="input 'ghost'.*not in the graph_def"):
            import_graph_def(gd)
        gd = GraphDef([_node("a", "Identity", ["b"], T=f32),
                       _node("b", "Identity", ["a"], T=f32)])
        with pytest.raises(ConversionError, match="cycle"):
            import_graph_def(gd)


def test_attr_values_parse_as_tf_wrote_them():
    graph_def, _, _, _ = _load("shapes")
    nodes = {n.name: n for n in graph_def.node}
    ss = nodes["strided_slice"]          # x[1, :, ::2, -1]
    assert (ss.get("begin_mask"), ss.get("end_mask"), ss.get("shrink_axis_mask")) == (6, 6, 9)
    assert nodes["x"].get("shape") == [None, 3, 4, 5]
    assert nodes["z"].get("shape") is None
    assert nodes["x"].get("dtype") == np.float32
    squeeze = next(n for n in graph_def.node if n.op == "Squeeze" and n.get("squeeze_dims"))
    assert squeeze.get("squeeze_dims") == [2]
    assert graph_def.versions["producer"] > 0

"""ONNX export of TF2's lowered control flow (If/While lowered to Switch/Merge/Enter/...
by TF's lower_if_op / lower_while_op, as convert_variables_to_constants_v2 leaves it):
Identity chains (Func/<cond>/then/_N/input/_M and .../output/_K) between the Switches,
the branch ops and the Merge, the Merge taking the then result first, and constants
reaching their branch's pivot only through a NoOp (input_control_node). Oracles: TF's
recorded outputs (fn_lowered, tools/record_tf_graph_def_functions.py) and numpy."""

from __future__ import annotations

import os

import numpy as np
import pytest

import onegraph as og
from onegraph.convert.tf_graph_def import from_graph_def
from onegraph.errors import ConversionError
from onegraph.train.graph_def import AttrValue, GraphDef, NodeDef
from onegraph.train.tensor_proto import make_tensor_proto

ort = pytest.importorskip("onnxruntime")

DATA = os.path.join(os.path.dirname(__file__), os.pardir, "train", "data", "tf_graph_defs")
F32, I32, BOOL = 1, 3, 10


def _node(name, op, inputs=(), **attrs):
    return NodeDef(name=name, op=op, input=list(inputs),
                   attr={k: AttrValue(kind, v) for k, (kind, v) in attrs.items()})


def _const(name, value, control=()):
    value = np.asarray(value)
    kind = {np.dtype(np.float32): F32, np.dtype(np.int32): I32}[value.dtype]
    return _node(name, "Const", [f"^{c}" for c in control], dtype=("type", kind),
                 value=("tensor", make_tensor_proto(value).SerializeToString()))


def _t(kind=F32):
    return {"T": ("type", kind)}


def _predicate(x="x", name="Greater"):
    """sum(x) > 0, as TF builds it."""
    return [_const(f"{name}/axis", np.int32(0)), _const(f"{name}/zero", np.float32(0)),
            _node(f"{name}/sum", "Sum", [x, f"{name}/axis"], T=("type", F32),
                  Tidx=("type", I32), keep_dims=("b", False)),
            _node(name, "Greater", [f"{name}/sum", f"{name}/zero"], **_t())]


def _lowered_if(name, pred, then_fn, else_fn, inputs):
    """TF2's lowering of If(pred, inputs): a Switch per input, the pivots, per branch a
    NoOp input_control_node, an Identity per input (Func/<name>/<branch>/input/_k),
    the branch's ops (`*_fn(prefix, input names, control node) -> (nodes, result)`),
    an output Identity, and a Merge of (then, else) in that order."""
    nodes = [_node(f"{name}/switch_pred", "Switch", [pred, pred], **_t(BOOL)),
             _node(f"{name}/pivot_t", "Identity", [f"{name}/switch_pred:1"], **_t(BOOL)),
             _node(f"{name}/pivot_f", "Identity", [f"{name}/switch_pred"], **_t(BOOL))]
    for k, x in enumerate(inputs):
        nodes.append(_node(f"{name}/input_{k}", "Switch", [x, pred], **_t()))
    outs = []
    for branch, fn, port, pivot in (("then", then_fn, ":1", "pivot_t"),
                                    ("else", else_fn, "", "pivot_f")):
        func = f"Func/{name}/{branch}"
        icn = f"{func}/input_control_node"
        nodes.append(_node(icn, "NoOp", [f"^{name}/{pivot}"]))
        args = []
        for k in range(len(inputs)):
            args.append(f"{func}/input/_{k}")
            nodes.append(_node(args[-1], "Identity", [f"{name}/input_{k}{port}", f"^{icn}"],
                               **_t()))
        body, result = fn(f"{name}/{branch}", args, icn)
        nodes += body
        nodes.append(_node(f"{name}/{branch}/Identity", "Identity", [result], **_t()))
        nodes.append(_node(f"{func}/output", "Identity", [f"{name}/{branch}/Identity"],
                           **_t()))
        outs.append(f"{func}/output")
    nodes.append(_node(f"{name}/output", "Merge", outs, N=("i", 2), **_t()))
    return nodes


def _times_two(prefix, args, icn):
    return [_const(f"{prefix}/y", np.float32(2), [icn]),
            _node(f"{prefix}/mul", "Mul", [args[0], f"{prefix}/y"], **_t())], f"{prefix}/mul"


def _plus_one(prefix, args, icn):
    return [_const(f"{prefix}/y", np.float32(1), [icn]),
            _node(f"{prefix}/add", "AddV2", [args[0], f"{prefix}/y"], **_t())], \
        f"{prefix}/add"


def _constant(value):
    def branch(prefix, args, icn):  # reads no input: only its pivot says where it runs
        return [_const(f"{prefix}/c", np.float32(value), [icn])], f"{prefix}/c"
    return branch


def _x():
    return _node("x", "Placeholder", dtype=("type", F32), shape=("shape", [3]))


def _run_both(graph_def, outputs, feeds, tmp_path):
    """{output: value} from og's Session and from onnxruntime on the exported model."""
    from onegraph.convert import to_onnx

    model = from_graph_def(graph_def, outputs=outputs)
    got_og = og.Session(model).run_signature("serving", **feeds)
    path = str(tmp_path / "m.onnx")
    to_onnx(model, path)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    got_ort = dict(zip(names, session.run(None, feeds)))
    return got_og, got_ort, session


XS = [np.array([1.0, 2.0, -0.5], np.float32), np.array([-3.0, 1.0, 0.5], np.float32)]


@pytest.mark.parametrize("x", XS)
def test_lowered_if_with_identity_chains(x, tmp_path):
    gd = GraphDef([_x()] + _predicate() + _lowered_if("cond", "Greater", _times_two,
                                                      _plus_one, ["x"])
                  + [_node("out", "Identity", ["cond/output"], **_t())])
    want = x * 2 if x.sum() > 0 else x + 1
    got_og, got_ort, session = _run_both(gd, ["out"], {"x": x}, tmp_path)
    np.testing.assert_allclose(got_og["out"], want, rtol=1e-6)
    np.testing.assert_allclose(got_ort["out"], want, rtol=1e-6)
    assert [i.name for i in session.get_inputs()] == ["x"]


@pytest.mark.parametrize("x", XS)
def test_merge_value_index_of_a_then_first_merge(x, tmp_path):
    # TF's Merge gives the index of the input that was alive: the then result is
    # input 0 of a lowered If's Merge, so value_index is 0 where the then branch ran
    gd = GraphDef([_x()] + _predicate() + _lowered_if("cond", "Greater", _times_two,
                                                      _plus_one, ["x"])
                  + [_node("out", "Identity", ["cond/output"], **_t()),
                     _node("which", "Identity", ["cond/output:1"], **_t(I32))])
    want = np.int32(0 if x.sum() > 0 else 1)
    got_og, got_ort, _ = _run_both(gd, ["out", "which"], {"x": x}, tmp_path)
    assert int(got_og["which"]) == want
    assert int(got_ort["which"]) == want
    np.testing.assert_allclose(got_ort["out"], x * 2 if x.sum() > 0 else x + 1, rtol=1e-6)


@pytest.mark.parametrize("x", XS)
def test_constant_branches_find_the_predicate_through_noop_relays(x, tmp_path):
    gd = GraphDef([_x()] + _predicate() + _lowered_if("cond", "Greater", _constant(3.0),
                                                      _constant(-1.0), [])
                  + [_node("out", "Mul", ["cond/output", "x"], **_t())])
    want = x * (3.0 if x.sum() > 0 else -1.0)
    # og's Session passes deadness through the NoOp relay as TF's executor does (the
    # untaken branch's constant is dead; before, its Merge could take it: 3x for -x)
    got_og, got_ort, _ = _run_both(gd, ["out"], {"x": x}, tmp_path)
    np.testing.assert_allclose(got_og["out"], want, rtol=1e-6)
    np.testing.assert_allclose(got_ort["out"], want, rtol=1e-6)


def _nested_then(prefix, args, icn):
    """then: an inner lowered If on sum(input - 1) > 0 of constant branches (10 or
    20), added to the input."""
    nodes = [_const(f"{prefix}/one", np.float32(1), [icn]),
             _node(f"{prefix}/shift", "Sub", [args[0], f"{prefix}/one"], **_t())]
    nodes += _predicate(f"{prefix}/shift", f"{prefix}/inner_pred")
    nodes += _lowered_if(f"{prefix}/inner", f"{prefix}/inner_pred", _constant(10.0),
                         _constant(20.0), [])
    nodes.append(_node(f"{prefix}/sum", "AddV2", [f"{prefix}/inner/output", args[0]],
                       **_t()))
    return nodes, f"{prefix}/sum"


@pytest.mark.parametrize("x", XS + [np.array([0.5, 0.5, 0.5], np.float32)])
def test_nested_lowered_if_with_constant_inner_branches(x, tmp_path):
    gd = GraphDef([_x()] + _predicate() + _lowered_if("cond", "Greater", _nested_then,
                                                      _plus_one, ["x"])
                  + [_node("out", "Identity", ["cond/output"], **_t())])
    if x.sum() > 0:
        want = x + (10.0 if (x - 1).sum() > 0 else 20.0)
    else:
        want = x + 1
    got_og, got_ort, _ = _run_both(gd, ["out"], {"x": x}, tmp_path)
    np.testing.assert_allclose(got_og["out"], want, rtol=1e-6)
    np.testing.assert_allclose(got_ort["out"], want, rtol=1e-6)


def test_branch_reading_both_switch_outputs_is_refused(tmp_path):
    from onegraph.convert import to_onnx

    def both(prefix, args, icn):  # reads the else side's Switch output too
        return [_node(f"{prefix}/add", "AddV2", [args[0], "cond/input_0"], **_t())], \
            f"{prefix}/add"
    gd = GraphDef([_x()] + _predicate() + _lowered_if("cond", "Greater", both, _plus_one,
                                                      ["x"])
                  + [_node("out", "Identity", ["cond/output"], **_t())])
    model = from_graph_def(gd, outputs=["out"])
    with pytest.raises(ConversionError, match="reads the other branch's output of "
                                              "Switch 'cond/input_0'"):
        to_onnx(model, str(tmp_path / "m.onnx"))


def test_unread_unused_control_flow_inputs_are_no_signature_inputs():
    gd = GraphDef([_x(),
                   _node("unused_control_flow_input", "Placeholder", dtype=("type", F32)),
                   _node("unused_control_flow_input_1", "Placeholder", dtype=("type", F32),
                         shape=("shape", [3])),
                   _node("z", "Placeholder", dtype=("type", F32), shape=("shape", [3])),
                   _node("out", "AddV2", ["x", "unused_control_flow_input_1"], **_t())])
    model = from_graph_def(gd, outputs=["out"])
    # the read one is an input as any other; so is an unread one of another name
    assert sorted(model.signatures["serving"].inputs) == [
        "unused_control_flow_input_1", "x", "z"]


def test_recorded_lowered_graph_exports_as_if_and_loop(tmp_path):
    from onegraph.convert import to_onnx
    import onnx

    with open(os.path.join(DATA, "fn_lowered.pb"), "rb") as f:
        graph_def = GraphDef.FromString(f.read())
    ref = np.load(os.path.join(DATA, "fn_lowered.npz"))
    assert [str(s) for s in ref["feeds"]] == ["x:0", "n:0"]
    model = from_graph_def(graph_def, outputs=["Identity"])
    assert sorted(model.signatures["serving"].inputs) == ["n", "x"]
    path = str(tmp_path / "m.onnx")
    to_onnx(model, path)
    ops = {n.op_type for n in onnx.load(path).graph.node}
    assert {"If", "Loop"} <= ops and not ops & {"Switch", "Merge", "Enter", "Exit"}
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for k in range(int(ref["runs"])):
        got = session.run(None, {"x": ref[f"in_{k}_0"], "n": ref[f"in_{k}_1"]})
        np.testing.assert_allclose(got[0], ref[f"out_{k}_0"], rtol=1e-5, atol=1e-6)

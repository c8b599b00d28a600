"""og.import_graph_def with TF1 control flow v1 (tf.cond, tf.while_loop) against TF:
frozen GraphDefs and outputs recorded by tools/record_tf_graph_def_control_flow.py
(TF 2.21, tf.compat.v1 with control flow v2 off), run by og's Session, saved to and
loaded from .og, and exported to ONNX for onnxruntime."""

from __future__ import annotations

import pytest

import onegraph as og
from onegraph.errors import ConversionError, GradientNotDefinedError, OneGraphError
from onegraph.train.graph_def import AttrValue, GraphDef, NodeDef
from onegraph.train.graph_def_import import import_graph_def

from . import graph_def_recordings as rec

NAMES = ["cond", "nested_cond", "while_capture", "nested_while", "while_max_iter",
         "cond_in_while", "frozen_rnn"]
LOOPS = ["while_capture", "nested_while", "while_max_iter", "cond_in_while", "frozen_rnn"]


def test_recordings_hold_control_flow_v1():
    for name in NAMES:
        graph_def, _, _, runs = rec.load("cf_" + name)
        kinds = {n.op for n in graph_def.node}
        assert {"Switch", "Merge"} <= kinds, name
        if name in LOOPS:
            assert {"Enter", "Exit", "NextIteration", "LoopCond"} <= kinds, name
        assert len(runs) >= 2, name


@pytest.mark.parametrize("name", NAMES)
def test_imported_graph_matches_tf(name):
    rec.check_imported("cf_" + name)


@pytest.mark.parametrize("name", NAMES)
def test_saved_og_file_runs(name, tmp_path):
    rec.check_og_file("cf_" + name, tmp_path)


@pytest.mark.parametrize("name", NAMES)
def test_onnx_export_runs_in_onnxruntime(name, tmp_path):
    rec.check_onnxruntime("cf_" + name, tmp_path)


def test_imported_loop_and_cond_refuse_gradients():
    for name, fetch, wrt, error in (
            ("while_capture", "s:0", "A:0", GradientNotDefinedError),
            ("cond", "out:0", "x:0", OneGraphError)):
        graph_def, _, _, _ = rec.load("cf_" + name)
        with og.Graph().as_default():
            y, x = import_graph_def(graph_def, return_elements=[fetch, wrt], name="")
            with pytest.raises(error, match="Exit|Merge"):
                og.gradients(og.reduce_sum(y), [x])


def _node(name, op, inputs=(), **attrs):
    return NodeDef(name=name, op=op, input=list(inputs),
                   attr={k: AttrValue(kind, v) for k, (kind, v) in attrs.items()})


def _float():
    return ("type", 1)


def test_cycle_without_next_iteration_is_refused():
    gd = GraphDef([_node("x", "Placeholder", dtype=_float()),
                        _node("a", "Merge", ["x", "b"], T=_float()),
                        _node("b", "Identity", ["a"], T=_float())])
    with og.Graph().as_default():
        with pytest.raises(ConversionError, match=r"cycle.*'a'.*'b'"):
            import_graph_def(gd)


def test_merge_back_edge_to_missing_node_is_refused():
    gd = GraphDef([_node("x", "Placeholder", dtype=_float()),
                        _node("e", "Enter", ["x"], T=_float(),
                              frame_name=("s", b"loop")),
                        _node("m", "Merge", ["e", "gone"], T=_float())])
    with og.Graph().as_default():
        with pytest.raises(ConversionError, match="'m'.*'gone'"):
            import_graph_def(gd)


def test_exit_outside_a_frame_is_refused():
    gd = GraphDef([_node("x", "Placeholder", dtype=_float()),
                        _node("out", "Exit", ["x"], T=_float())])
    with og.Graph().as_default():
        with pytest.raises(ConversionError, match="'out'.*not inside a loop frame"):
            import_graph_def(gd)


def test_loop_variable_changing_shape_is_refused():
    # Pack turns the (2,) loop variable into (1, 2): TF needs shape_invariants for that
    gd = GraphDef([_node("x", "Placeholder", dtype=_float(), shape=("shape", [2])),
                   _node("e", "Enter", ["x"], T=_float(), frame_name=("s", b"loop")),
                   _node("m", "Merge", ["e", "nx"], T=_float(), N=("i", 2)),
                   _node("b", "Pack", ["m"], T=_float(), N=("i", 1), axis=("i", 0)),
                   _node("nx", "NextIteration", ["b"], T=_float())])
    with og.Graph().as_default():
        with pytest.raises(ConversionError, match=r"'m'.*\[2\].*\[1, 2\]"):
            import_graph_def(gd)

"""og.import_graph_def with TF2-style GraphDefs against TF: a function library called
through StatelessIf / StatelessWhile / While / StatelessCase / PartitionedCall, recorded
by tools/record_tf_graph_def_functions.py (TF 2.21 tf.function concrete functions,
frozen with convert_variables_to_constants_v2), run by og's Session, saved to and loaded
from .og, and exported to ONNX for onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

import onegraph as og
from onegraph.convert.tf_graph_def import from_graph_def
from onegraph.errors import ConversionError
from onegraph.train.graph_def import AttrValue, GraphDef, NodeDef
from onegraph.train.graph_def_import import import_graph_def

from . import graph_def_recordings as rec

# name -> (ops the top-level graph holds, ops its library functions hold)
NAMES = {
    "cond": ({"StatelessIf"}, {"Mul", "Sub", "Sum"}),
    "while_capture": ({"StatelessWhile"}, {"MatMul", "Less"}),
    "switch_case": ({"StatelessCase"}, {"Sin", "Max"}),
    "nested_call": ({"PartitionedCall"}, {"PartitionedCall", "Tanh"}),
    "cond_in_while": ({"StatelessWhile"}, {"StatelessIf", "GatherV2"}),
    "frozen_rnn": ({"While"}, {"MatMul", "Tanh"}),
    "lowered": ({"Switch", "Merge", "Enter", "Exit", "NextIteration"}, set()),
}


def test_recordings_hold_functional_ops():
    for name, (top, inside) in NAMES.items():
        graph_def, _, _, runs = rec.load("fn_" + name)
        library = graph_def.functions()
        assert top <= {n.op for n in graph_def.node}, name
        in_functions = {n.op for fn in library.values() for n in fn.node}
        assert inside <= in_functions, name
        assert bool(library) == (name != "lowered"), name
        assert len(runs) >= 2, name


def test_library_parses_signatures_and_rets():
    library = GraphDef.FromString(rec.read("fn_nested_call")).functions()
    middle = next(fn for name, fn in library.items() if "middle" in name)
    assert middle.input_args == ["u", "v"]
    assert len(middle.output_args) == 2
    assert set(middle.ret) == set(middle.output_args)
    # body inputs are "node:output_arg:index" or a bare argument name
    refs = [r for n in middle.node for r in n.input]
    assert "u" in refs and any(r.count(":") == 2 for r in refs)


@pytest.mark.parametrize("name", list(NAMES))
def test_imported_graph_matches_tf(name):
    rec.check_imported("fn_" + name)


@pytest.mark.parametrize("name", list(NAMES))
def test_saved_og_file_runs(name, tmp_path):
    rec.check_og_file("fn_" + name, tmp_path)


def test_from_graph_def_finds_outputs_of_a_pb_file(tmp_path):
    path = tmp_path / "frozen.pb"
    path.write_bytes(rec.read("fn_cond"))
    _, feeds, fetches, runs = rec.load("fn_cond")
    model = from_graph_def(str(path))
    sess = og.Session(model)
    got = sess.run_signature("serving", **rec.model_feeds(feeds, runs[1][0]))
    assert sorted(got) == sorted(f.split(":")[0] for f in fetches)
    for f, b in zip(fetches, runs[1][1]):
        rec.check(got[f.split(":")[0]], b, f)


@pytest.mark.parametrize("name", list(NAMES))
def test_onnx_export_runs_in_onnxruntime(name, tmp_path):
    rec.check_onnxruntime("fn_" + name, tmp_path)


def _func(name: str) -> AttrValue:
    """A "func" attribute: NameAttrList bytes holding only the name (field 1)."""
    data = name.encode()
    return AttrValue("func", bytes([0x0A, len(data)]) + data)


def _float():
    return AttrValue("type", 1)


def test_call_of_a_missing_function_is_refused_by_name():
    gd = GraphDef([NodeDef("x", "Placeholder", attr={"dtype": _float()}),
                   NodeDef("c", "PartitionedCall", ["x"], attr={"f": _func("nowhere_fn")})])
    with og.Graph().as_default():
        with pytest.raises(ConversionError, match="'nowhere_fn'.*not in the graph_def's "
                                                  "library"):
            import_graph_def(gd)


def test_unknown_op_type_that_is_no_library_function_is_unsupported():
    gd = GraphDef([NodeDef("x", "Placeholder", attr={"dtype": _float()}),
                   NodeDef("c", "__inference_gone_1", ["x"])])
    with og.Graph().as_default():
        with pytest.raises(ConversionError, match=r"unsupported op type\(s\): "
                                                  r"__inference_gone_1 \(x1"):
            import_graph_def(gd)


def test_unsupported_op_inside_a_function_is_listed():
    # the else branch's Sub becomes "Suq" (same length: the library stays well-formed)
    data = rec.read("fn_cond")
    assert data.count(b"\x12\x03Sub") == 1
    gd = GraphDef.FromString(data.replace(b"\x12\x03Sub", b"\x12\x03Suq"))
    with og.Graph().as_default():
        with pytest.raises(ConversionError, match=r"1 unsupported op type\(s\): Suq "
                                                  r"\(x1, first node 'cond_false_\d+/"):
            import_graph_def(gd)


def test_library_function_called_by_its_name_as_op_type():
    graph_def = GraphDef.FromString(rec.read("fn_nested_call"))
    inner = next(name for name in graph_def.functions() if "inner" in name)
    gd = GraphDef([NodeDef("x", "Placeholder", attr={"dtype": _float()}),
                   NodeDef("c", inner, ["x"])], library=graph_def.library)
    x = np.array([-1.5, 0.0, 0.25], np.float32)
    with og.Graph().as_default() as g:
        y, xt = import_graph_def(gd, return_elements=["c:0", "x:0"], name="")
        with og.Session(graph=g) as sess:
            got = sess.run(y, {xt: x})
    # inner(u) = tanh(u) * 2 (the recorder's tf.function)
    np.testing.assert_allclose(got, np.tanh(x) * 2.0, rtol=1e-6)


def test_while_runs_its_body_the_recorded_number_of_times():
    # cond_in_while's loop counter output equals the length of x
    graph_def, feeds, fetches, runs = rec.load("fn_cond_in_while")
    with og.Graph().as_default() as g:
        i, x = import_graph_def(graph_def, return_elements=["Identity:0", "x:0"], name="")
        with og.Session(graph=g) as sess:
            assert int(sess.run(i, {x: runs[0][0][0]})) == 5

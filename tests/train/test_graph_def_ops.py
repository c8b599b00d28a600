"""og.import_graph_def's op table against TF: one op per case (graph_def_op_cases.py),
GraphDefs and outputs recorded by tools/record_tf_graph_def_ops.py (TF 2.21,
tf.compat.v1), imported and run by og's Session, and for a sample exported to ONNX and
run by onnxruntime."""

from __future__ import annotations

import os

import numpy as np
import pytest

import onegraph as og
from onegraph.convert.tf_graph_def import from_graph_def
from onegraph.errors import ConversionError
from onegraph.train.graph_def import GraphDef
from onegraph.train.graph_def_import import import_graph_def
from onegraph.train.graph_def_ops import CONVERTERS

from .graph_def_op_cases import BY_NAME, CASES, NAMES

DATA = os.path.join(os.path.dirname(__file__), "data", "tf_graph_defs", "ops_cases.npz")


@pytest.fixture(scope="module")
def recorded():
    with np.load(DATA) as data:
        return {k: data[k] for k in data.files}


def _load(recorded, name):
    graph_def = GraphDef.FromString(recorded[f"{name}__graph"].tobytes())
    feeds = [str(s) for s in recorded[f"{name}__feeds"]]
    fetches = [str(s) for s in recorded[f"{name}__fetches"]]
    runs = [([recorded[f"{name}__in_{k}_{i}"] for i in range(len(feeds))],
             [recorded[f"{name}__out_{k}_{i}"] for i in range(len(fetches))])
            for k in range(int(recorded[f"{name}__runs"]))]
    return graph_def, feeds, fetches, runs


def _as_bytes(got):
    """og's string results (str, bytes kept as surrogate escapes) as TF's bytes."""
    flat = [v.encode("utf-8", "surrogateescape") if isinstance(v, str) else bytes(v)
            for v in np.asarray(got, dtype=object).reshape(-1)]
    return np.array(flat).reshape(np.shape(got))


def _check(got, want, what):
    got = _as_bytes(got) if want.dtype.kind == "S" else np.asarray(got)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert got.dtype == want.dtype or want.dtype.kind == got.dtype.kind == "S", \
        (what, got.dtype, want.dtype)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def test_every_case_is_recorded_and_holds_its_op(recorded):
    for case in CASES:
        graph_def, _, fetches, runs = _load(recorded, case.name)
        assert case.op in {n.op for n in graph_def.node}, case.name
        assert case.op in CONVERTERS, case.op
        assert (fetches or case.op == "PrintV2") and 1 <= len(runs) <= 3, case.name


# outputs TF leaves unset (Svd's u and v without compute_uv): only shape and dtype count
UNSET_OUTPUTS = {"svd_values": {1, 2}}


@pytest.mark.parametrize("name", NAMES)
def test_imported_op_matches_tf(recorded, name):
    graph_def, feeds, fetches, runs = _load(recorded, name)
    with og.Graph().as_default() as g:
        outs = import_graph_def(graph_def, return_elements=fetches + feeds, name="")
        tensors, holders = outs[:len(fetches)], outs[len(fetches):]
        if not fetches:     # an op without outputs (PrintV2): it must run
            tensors = [g.get_operation_by_name("op")]
        with og.Session(graph=g) as sess:
            for k, (ins, want) in enumerate(runs):
                got = sess.run(tensors, dict(zip(holders, ins)))[:len(fetches)]
                for i, (f, a, b) in enumerate(zip(fetches, got, want)):
                    if i in UNSET_OUTPUTS.get(name, ()):
                        assert (np.shape(a), np.asarray(a).dtype) == (b.shape, b.dtype)
                        continue
                    _check(a, b, f"{name} run {k} {f}")


ONNX_NAMES = [c.name for c in CASES if c.onnx]


@pytest.mark.parametrize("name", ONNX_NAMES)
def test_onnx_export_matches_tf(recorded, name, tmp_path):
    ort = pytest.importorskip("onnxruntime")
    from onegraph.convert import to_onnx

    graph_def, feeds, fetches, runs = _load(recorded, name)
    assert len(fetches) == 1, name
    model = from_graph_def(graph_def, outputs=["op"])
    path = str(tmp_path / "m.onnx")
    to_onnx(model, path)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for k, (ins, want) in enumerate(runs):
        got = session.run(None, {f.split(":")[0]: v for f, v in zip(feeds, ins)})
        _check(got[0], want[0], f"{name} run {k} (onnxruntime)")


def test_strided_slice_needs_constant_strides(recorded):
    graph_def, feeds, _, _ = _load(recorded, "ss_ranges")
    for node in graph_def.node:
        if node.name == "op":
            node.input[3] = feeds[1].split(":")[0]     # strides from a placeholder
    with og.Graph().as_default():
        with pytest.raises(ConversionError, match="'op'.*strides must be a constant"):
            import_graph_def(graph_def, name="")


def test_case_table_is_consistent():
    assert set(NAMES) == set(BY_NAME)
    assert {c.op for c in CASES} >= {"StridedSlice", "GatherNd", "OneHot", "Where"}


def test_print_ops_write_what_tf_writes(recorded, capsys):
    # TF 2.21 wrote these lines when recording (PrintV2 to stdout, Print to stderr)
    for name, stream, text in (("print_v2", "out", "og import test!\n"),
                               ("print", "err", "og import test: [")):
        graph_def, feeds, _, runs = _load(recorded, name)
        with og.Graph().as_default() as g:
            holders = import_graph_def(graph_def, return_elements=feeds, name="")
            with og.Session(graph=g) as sess:
                capsys.readouterr()
                sess.run(g.get_operation_by_name("op"), dict(zip(holders, runs[0][0])))
        written = getattr(capsys.readouterr(), stream)
        assert written.startswith(text), (name, written)

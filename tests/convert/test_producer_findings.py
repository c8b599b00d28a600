"""Minimal reproductions of what the sweep of further ONNX producers found in onegraph:
jax2onnx exports (data/jax_exported/), the graph rewriters onnxslim, onnxsim and
onnxoptimizer over the exported-model corpora (data/rewritten/), and the other
producers tried (see /tmp/producers_findings/FINDINGS.md of the sweep, and each test's
docstring). A strict xfail marks an onegraph bug not fixed yet: when a fix makes it
pass, the mark goes and the test stays.

Each model is built by hand with onnx.helper and checked against onnxruntime, which
runs it.
"""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto as T  # noqa: E402
from onnx import helper  # noqa: E402

import onegraph as og  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402


def _ort(model, feeds, outputs):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    return sess.run(outputs, feeds)


def _empty_scales_in_if(opset=13):
    """An If whose branches Resize the outer input x to sizes [1, 1, 4, 4], passing as
    scales an empty float initializer of the OUTER graph (what onnxslim makes of
    tf2onnx's CropAndResize Loop body: it hoists the body's empty Constant out)."""
    vi = helper.make_tensor_value_info

    def branch(name, mode):
        return helper.make_graph(
            [helper.make_node("Resize", ["x", "", "empty", "sizes"], [f"y_{name}"],
                              mode=mode)],
            name, [], [vi(f"y_{name}", T.FLOAT, [1, 1, 4, 4])])
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], then_branch=branch("then", "linear"),
                          else_branch=branch("else", "nearest"))],
        "g", [vi("c", T.BOOL, []), vi("x", T.FLOAT, [1, 1, 2, 2])],
        [vi("y", T.FLOAT, [1, 1, 4, 4])],
        initializer=[helper.make_tensor("empty", T.FLOAT, [0], []),
                     helper.make_tensor("sizes", T.INT64, [4], [1, 1, 4, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def test_resize_with_outer_scope_empty_scales_runs_as_onnxruntime():
    """The import and the Session are right: an empty scales means 'use sizes'."""
    model = _empty_scales_in_if()
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    for c in (True, False):
        feeds = {"c": np.array(c), "x": x}
        (want,) = _ort(model, feeds, ["y"])
        (got,) = og.Session(from_onnx(model)).run(["y"], feeds)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_resize_with_outer_scope_empty_scales_in_a_subgraph_exports():
    """to_onnx writes the branch's Resize with scales omitted: ONNX's full check cannot
    see from inside a branch that the outer initializer is empty, and refused a Resize
    given both (found in onnxslim's rewrite of tf2onnx's CropAndResize)."""
    model = _empty_scales_in_if()
    exported = to_onnx(from_onnx(model))
    onnx.checker.check_model(exported, full_check=True)
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    for c in (True, False):
        feeds = {"c": np.array(c), "x": x}
        np.testing.assert_allclose(_ort(exported, feeds, ["y"])[0],
                                   _ort(model, feeds, ["y"])[0], rtol=1e-6, atol=1e-6)


def _reshape_allowzero(target_len, x_shape):
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], allowzero=1)], "g",
        [vi("x", T.FLOAT, ["batch"] + list(x_shape[1:])), vi("shape", T.INT64, [target_len])],
        [vi("y", T.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    return model


@pytest.mark.parametrize("target, x_shape", [([0, 8, -1, 16], (0, 4, 32)),
                                             ([0, -1], (0, 6))])
def test_reshape_allowzero_of_an_empty_batch_with_minus_one(target, x_shape):
    """Reshape(allowzero=1) of an empty batch to a run-time shape holding 0 and -1, as
    PyTorch's dynamo exporter writes view(batch, heads, -1, head_dim) in the HF decoders
    of hf_exported: ONNX calls the shape invalid, onnxruntime takes the -1 from the
    non-zero dims ([0, 8, 1, 16]), and so does onegraph (it raised a ShapeError)."""
    model = _reshape_allowzero(len(target), x_shape)
    feeds = {"x": np.zeros(x_shape, np.float32), "shape": np.array(target, np.int64)}
    (want,) = _ort(model, feeds, ["y"])
    (got,) = og.Session(from_onnx(model)).run(["y"], feeds)
    assert got.shape == want.shape


def test_reshape_allowzero_zero_and_minus_one_with_values_is_refused():
    """With values to place, a 0 beside a -1 leaves the -1 undefined: both refuse."""
    model = _reshape_allowzero(3, (2, 4, 3))
    feeds = {"x": np.zeros((2, 4, 3), np.float32), "shape": np.array([2, 0, -1], np.int64)}
    with pytest.raises(Exception):
        _ort(model, feeds, ["y"])
    with pytest.raises(Exception, match="0 and -1"):
        og.Session(from_onnx(model)).run(["y"], feeds)

"""Opset-8 (batched) Scan: imported as loops, checked against onnxruntime, which runs
the original opset-8 model natively."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from onegraph.convert import from_onnx
from onegraph.convert.onnx_legacy import needs_scan_rewrite, rewrite_batched_scans
from onegraph.errors import ConversionError
from onegraph.train.session import Session

F = TensorProto.FLOAT


def _info(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes, inputs, outputs, opset=8):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    return model


def _run_both(model, feeds):
    names = [o.name for o in model.graph.output]
    ours = Session(from_onnx(model)).run(names, feeds)
    ref = ort.InferenceSession(model.SerializeToString(),
                               providers=["CPUExecutionProvider"]).run(names, feeds)
    return ours, ref


def _two_state_body():
    """states (acc [2], count []), scan inputs (x [2], w [2]); outputs acc', count',
    acc' * w, and x - w."""
    nodes = [helper.make_node("Mul", ["x", "w"], ["xw"]),
             helper.make_node("Add", ["acc", "xw"], ["acc2"]),
             helper.make_node("Add", ["count", "one"], ["count2"]),
             helper.make_node("Mul", ["acc2", "w"], ["y1"]),
             helper.make_node("Sub", ["x", "w"], ["y2"])]
    return helper.make_graph(
        nodes, "body", [_info("acc", [2]), _info("count", []), _info("x", [2]), _info("w", [2])],
        [_info("acc2", [2]), _info("count2", []), _info("y1", [2]), _info("y2", [2])],
        initializer=[helper.make_tensor("one", F, [], [1.0])])


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("directions", [None, [0, 1], [1, 1]])
def test_batched_scan_matches_onnxruntime(batch, directions):
    kw = {} if directions is None else {"directions": directions}
    node = helper.make_node("Scan", ["", "acc0", "n0", "xs", "ws"],
                            ["acc", "n", "y1", "y2"], body=_two_state_body(),
                            num_scan_inputs=2, **kw)
    model = _model([node],
                   [_info("acc0", [batch, 2]), _info("n0", [batch]),
                    _info("xs", [batch, 5, 2]), _info("ws", [batch, 5, 2])],
                   [_info("acc", [batch, 2]), _info("n", [batch]), _info("y1", [batch, 5, 2]),
                    _info("y2", [batch, 5, 2])])
    rng = np.random.default_rng(batch)
    feeds = {"acc0": rng.standard_normal((batch, 2)).astype(np.float32),
             "n0": np.arange(batch, dtype=np.float32),
             "xs": rng.standard_normal((batch, 5, 2)).astype(np.float32),
             "ws": rng.standard_normal((batch, 5, 2)).astype(np.float32)}
    ours, ref = _run_both(model, feeds)
    for got, want in zip(ours, ref, strict=True):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("direction", [0, 1])
def test_sequence_lens_stop_each_batch_entry_early(direction):
    node = helper.make_node("Scan", ["lens", "acc0", "n0", "xs", "ws"],
                            ["acc", "n", "y1", "y2"], body=_two_state_body(),
                            num_scan_inputs=2, directions=[direction, 0])
    model = _model([node],
                   [_info("lens", [3], TensorProto.INT64), _info("acc0", [3, 2]),
                    _info("n0", [3]), _info("xs", [3, 4, 2]), _info("ws", [3, 4, 2])],
                   [_info("acc", [3, 2]), _info("n", [3]), _info("y1", [3, 4, 2]),
                    _info("y2", [3, 4, 2])])
    rng = np.random.default_rng(7)
    feeds = {"lens": np.array([4, 2, 1], np.int64),
             "acc0": rng.standard_normal((3, 2)).astype(np.float32),
             "n0": np.zeros(3, np.float32),
             "xs": rng.standard_normal((3, 4, 2)).astype(np.float32),
             "ws": rng.standard_normal((3, 4, 2)).astype(np.float32)}
    ours, ref = _run_both(model, feeds)
    # the states stop after each entry's own length: 4, 2 and 1 steps
    np.testing.assert_array_equal(ours[1], [4, 2, 1])
    for got, want in zip(ours[:2], ref[:2]):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    # the scan outputs' first n steps are defined; the rest is padding, which we zero
    for got, want in zip(ours[2:], ref[2:]):
        assert got.shape == want.shape == (3, 4, 2)
        for b, n in enumerate(feeds["lens"]):
            np.testing.assert_allclose(got[b, :n], want[b, :n], rtol=1e-6, atol=1e-6)
            assert not got[b, n:].any()


def test_body_reads_the_outer_scope_and_nests():
    # the outer Scan's body holds an opset-8 Scan over a row and adds an outer tensor
    inner_body = helper.make_graph(
        [helper.make_node("Add", ["s", "e"], ["s2"])], "inner",
        [_info("s", []), _info("e", [])], [_info("s2", [])])
    body = helper.make_graph(
        [helper.make_node("Unsqueeze", ["acc"], ["acc_b"], axes=[0]),
         helper.make_node("Unsqueeze", ["row"], ["row_b"], axes=[0]),
         helper.make_node("Scan", ["", "acc_b", "row_b"], ["tot_b"], body=inner_body,
                          num_scan_inputs=1),
         helper.make_node("Squeeze", ["tot_b"], ["tot"], axes=[0]),
         helper.make_node("Add", ["tot", "bias"], ["acc2"])],
        "outer", [_info("acc", []), _info("row", [3])], [_info("acc2", []), _info("tot", [])])
    node = helper.make_node("Scan", ["", "acc0", "rows"], ["acc", "tots"], body=body,
                            num_scan_inputs=1)
    model = _model([node], [_info("acc0", [2]), _info("rows", [2, 4, 3]), _info("bias", [])],
                   [_info("acc", [2]), _info("tots", [2, 4])])
    feeds = {"acc0": np.array([1, -1], np.float32),
             "rows": np.arange(24, dtype=np.float32).reshape(2, 4, 3),
             "bias": np.array(0.5, np.float32)}
    ours, ref = _run_both(model, feeds)
    for got, want in zip(ours, ref, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_rewrite_only_for_old_opsets_and_leaves_the_input_alone():
    node = helper.make_node("Scan", ["", "acc0", "n0", "xs", "ws"],
                            ["acc", "n", "y1", "y2"], body=_two_state_body(),
                            num_scan_inputs=2)
    model = _model([node], [_info("acc0", [1, 2]), _info("n0", [1]),
                            _info("xs", [1, 3, 2]), _info("ws", [1, 3, 2])],
                   [_info("acc", [1, 2]), _info("n", [1]), _info("y1", [1, 3, 2]),
                    _info("y2", [1, 3, 2])])
    assert needs_scan_rewrite(model, 8)
    assert not needs_scan_rewrite(model, 9)
    before = model.SerializeToString()
    out = rewrite_batched_scans(model)
    assert model.SerializeToString() == before
    assert [n.op_type for n in out.graph.node][-1] == "Loop"
    assert not any(n.op_type == "Scan" for n in out.graph.node)
    # graph inputs keep their batch axes (onnx's own adapter drops them)
    dims = [[d.dim_value for d in i.type.tensor_type.shape.dim] for i in out.graph.input]
    assert dims == [[1, 2], [1], [1, 3, 2], [1, 3, 2]]


@pytest.mark.parametrize("inputs,outputs", [
    (["", "acc0", "xs"], ["acc", "n", "y1", "y2"]),      # too few inputs for the body
    (["", "acc0", "n0", "xs", "ws"], ["acc", "n", "y1"]),  # an output short (ORT refuses)
])
def test_scan_that_does_not_fit_its_body_is_a_conversion_error(inputs, outputs):
    node = helper.make_node("Scan", inputs, outputs, body=_two_state_body(),
                            num_scan_inputs=2)
    graph = helper.make_graph([node], "g", [_info(i, None) for i in inputs if i],
                              [_info(o, None) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)])
    with pytest.raises(ConversionError, match="do not fit a body"):
        from_onnx(model)


def test_imported_batched_scan_exports_and_runs_in_onnxruntime():
    # the export keeps the Loops' empty condition inputs, which the checker requires;
    # the outputs y1, y2 share the body's names, which the inlined body must rename
    from onegraph.convert import to_onnx

    node = helper.make_node("Scan", ["lens", "acc0", "n0", "xs", "ws"],
                            ["acc", "n", "y1", "y2"], body=_two_state_body(),
                            num_scan_inputs=2, directions=[1, 0])
    model = _model([node],
                   [_info("lens", [2], TensorProto.INT64), _info("acc0", [2, 2]),
                    _info("n0", [2]), _info("xs", [2, 3, 2]), _info("ws", [2, 3, 2])],
                   [_info("acc", [2, 2]), _info("n", [2]), _info("y1", [2, 3, 2]),
                    _info("y2", [2, 3, 2])])
    exported = to_onnx(from_onnx(model))
    assert all(len(n.input) >= 2 for n in exported.graph.node if n.op_type == "Loop")
    rng = np.random.default_rng(3)
    feeds = {"lens": np.array([3, 2], np.int64),
             "acc0": rng.standard_normal((2, 2)).astype(np.float32),
             "n0": np.zeros(2, np.float32),
             "xs": rng.standard_normal((2, 3, 2)).astype(np.float32),
             "ws": rng.standard_normal((2, 3, 2)).astype(np.float32)}

    def run(proto):
        return ort.InferenceSession(proto.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, feeds)

    back, want = run(exported), run(model)
    np.testing.assert_allclose(back[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(back[1], want[1])
    np.testing.assert_allclose(back[2][0], want[2][0], rtol=1e-6)
    np.testing.assert_allclose(back[2][1, :2], want[2][1, :2], rtol=1e-6)

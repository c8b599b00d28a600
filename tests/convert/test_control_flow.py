"""Loop and Scan variants beyond the node tests, checked against onnxruntime."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from onegraph.convert import from_onnx
from onegraph.train.session import Session


def _both(model, feeds):
    ours = Session(from_onnx(model)).run([o.name for o in model.graph.output], feeds)
    ref = ort.InferenceSession(model.SerializeToString(),
                               providers=["CPUExecutionProvider"]).run(None, feeds)
    return ours, ref


@pytest.mark.parametrize("in_dir,out_dir,in_axis,out_axis",
                         [(0, 0, 0, 0), (1, 0, 1, 0), (0, 1, 0, 1), (1, 1, -1, -1)])
def test_scan_axes_and_directions(in_dir, out_dir, in_axis, out_axis):
    s_in = helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [2])
    x_in = helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [2])
    s_out = helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [2])
    y_out = helper.make_tensor_value_info("y_out", TensorProto.FLOAT, [2])
    body = helper.make_graph([helper.make_node("Add", ["s_in", "x_in"], ["s_out"]),
                              helper.make_node("Mul", ["s_out", "x_in"], ["y_out"])],
                             "body", [s_in, x_in], [s_out, y_out])
    node = helper.make_node("Scan", ["init", "xs"], ["final", "ys"], body=body,
                            num_scan_inputs=1, scan_input_directions=[in_dir],
                            scan_output_directions=[out_dir], scan_input_axes=[in_axis],
                            scan_output_axes=[out_axis])
    xs_shape = [4, 2] if in_axis == 0 else [2, 4]
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("init", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("xs", TensorProto.FLOAT, xs_shape)],
        [helper.make_tensor_value_info("final", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("ys", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    rng = np.random.default_rng(0)
    feeds = {"init": rng.standard_normal(2).astype(np.float32),
             "xs": rng.standard_normal(xs_shape).astype(np.float32)}
    ours, ref = _both(model, feeds)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize("trips,cond", [(5, True), (0, True), (5, False), (None, True)])
def test_loop_trip_count_cond_and_scan_outputs(trips, cond):
    """Loop: stops at M, or when the body's cond turns false (after i >= 3)."""
    i_in = helper.make_tensor_value_info("i", TensorProto.INT64, [])
    c_in = helper.make_tensor_value_info("c_in", TensorProto.BOOL, [])
    v_in = helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [2])
    three = helper.make_tensor("three", TensorProto.INT64, [], [3])
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
         helper.make_node("Add", ["v_in", "fi"], ["v_out"]),
         helper.make_node("Less", ["i", "three"], ["c_out"]),
         helper.make_node("Identity", ["v_out"], ["scan_out"])],
        "body", [i_in, c_in, v_in],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("scan_out", TensorProto.FLOAT, [2])],
        initializer=[three])
    inputs = ["M" if trips is not None else "", "cond", "v0"]
    node = helper.make_node("Loop", inputs, ["v_final", "stacked"], body=body)
    graph_inputs = [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                    helper.make_tensor_value_info("v0", TensorProto.FLOAT, [2])]
    feeds = {"cond": np.array(cond), "v0": np.array([1, 2], np.float32)}
    if trips is not None:
        graph_inputs.append(helper.make_tensor_value_info("M", TensorProto.INT64, []))
        feeds["M"] = np.array(trips, np.int64)
    graph = helper.make_graph(
        [node], "g", graph_inputs,
        [helper.make_tensor_value_info("v_final", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("stacked", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    ours, ref = _both(model, feeds)
    for a, b in zip(ours, ref):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b)

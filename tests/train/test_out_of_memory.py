"""A kernel that cannot get the memory it needs raises onegraph.ResourceExhaustedError
(TF1's name; a subclass of ExecutionError) naming the node, its op and input shapes,
whether it runs in the main plan or in a loop frame. The sizes asked for (1 PiB) are
beyond any machine's address space, so the allocation fails at once everywhere."""

import numpy as np
import pytest

import onegraph as og

PIB_FLOATS = 2 ** 48  # float32 elements: 1 PiB


def test_kernel_out_of_memory_names_node_and_shapes():
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    from onegraph.convert import from_onnx

    graph = helper.make_graph(
        [helper.make_node("Pad", ["x", "pads"], ["y"], name="big_pad")], "pad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1]),
         helper.make_tensor_value_info("pads", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    onnx.checker.check_model(model)
    sess = og.Session(from_onnx(model))
    feeds = {"x": np.ones(1, np.float32), "pads": np.array([0, PIB_FLOATS], np.int64)}
    with pytest.raises(og.ResourceExhaustedError,
                       match=r"node 'big_pad' \(Pad\): out of memory with input shapes "
                             r"\[1\], \[2\]: .*1\.00 PiB"):
        sess.run(["y"], feeds)
    # past the address space numpy refuses with a ValueError: the same error
    feeds["pads"] = np.array([0, 2 ** 62], np.int64)
    with pytest.raises(og.ResourceExhaustedError,
                       match=r"node 'big_pad' \(Pad\): out of memory .*array is too big"):
        sess.run(["y"], feeds)
    # the Session stays usable
    y, = sess.run(["y"], {"x": np.ones(1, np.float32), "pads": np.array([1, 0], np.int64)})
    np.testing.assert_array_equal(y, [0.0, 1.0])


def test_out_of_memory_in_a_loop_frame():
    g = og.Graph()
    with g.as_default():
        n = og.placeholder(og.int64, [], name="n")

        def body(i, acc):
            return i + 1, acc + og.reduce_sum(og.zeros(og.stack([n]), og.float32))

        result = og.while_loop(lambda i, acc: i < 2, body,
                               [og.constant(0), og.constant(0.0)], name="grow")
    sess = og.Session(g)
    with pytest.raises(og.ResourceExhaustedError,
                       match=r"in loop 'grow.*': ConstantOfShape: .*over the limit"):
        sess.run(result, {n: np.int64(PIB_FLOATS)})
    assert sess.run(result, {n: np.int64(3)})[1] == 0.0


def test_resource_exhausted_is_an_execution_error():
    assert issubclass(og.ResourceExhaustedError, og.ExecutionError)

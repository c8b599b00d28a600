"""Session.run's fetch/feed names as TF1 and onnxruntime users write them: TF1's
"op:k" output names, and the None fetches of onnxruntime's run(None, feeds)."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import onegraph as og
from onegraph.convert import from_onnx
from onegraph.errors import OneGraphError


def _topk_model():
    k = helper.make_tensor("k", TensorProto.INT64, [1], [2])
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], name="top")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5])],
        [helper.make_tensor_value_info("values", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, [2])],
        initializer=[k])
    return from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def test_tf1_output_names_mean_the_nodes_outputs():
    sess = og.Session(_topk_model())
    x = np.array([3, 9, 1, 7, 5], np.float32)
    values, indices = sess.run(["top:0", "top:1"], {"x:0": x})
    np.testing.assert_array_equal(values, [9, 7])
    np.testing.assert_array_equal(indices, [1, 3])
    # a tensor's own name with ":0" is the tensor
    np.testing.assert_array_equal(sess.run("indices:0", {"x": x}), [1, 3])


def test_tf1_names_on_api_graphs():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 2], name="x")
        y = og.nn.relu(x)
    sess = og.Session(g)
    out = sess.run(f"{y.name}:0", {"x:0": np.array([[-1, 2]], np.float32)})
    np.testing.assert_array_equal(out, [[0, 2]])


@pytest.mark.parametrize("name", ["top:2", "nothing:0", "values:1", "top:x"])
def test_output_names_that_name_nothing_are_refused(name):
    sess = og.Session(_topk_model())
    with pytest.raises(OneGraphError, match=f"has no tensor named {name!r}"):
        sess.run(name, {"x": np.zeros(5, np.float32)})


def test_none_fetches_say_what_to_give():
    sess = og.Session(_topk_model())
    with pytest.raises(TypeError, match=r"fetches is None; give the tensors or ops to "
                                        r"fetch.*graph outputs \['values', 'indices'\]"):
        sess.run(None, {"x": np.zeros(5, np.float32)})


def test_top_level_names_are_the_training_api_and_listed():
    """og.Tensor is the graph-building tensor (TF1's tf.Tensor); the file's IR tensor is
    og.IRTensor (as og.IRGraph); dir(og) lists what loads on first use."""
    import onegraph.format

    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2])
    assert isinstance(x, og.Tensor)
    assert og.IRTensor is onegraph.format.Tensor and og.IRGraph is onegraph.format.Graph
    assert {"Session", "RunMetadata", "placeholder", "nn", "Tensor"} <= set(dir(og))


def test_run_signature_names_missing_and_unknown_keys_as_the_cli_does(tmp_path, capsys):
    """Session.run_signature and `onegraph run --input` word a key mismatch alike (the
    CLI adds the flag); an empty list is left out."""
    from onegraph.cli import main

    model = _topk_model()
    with pytest.raises(OneGraphError, match=r"^signature 'serving' takes inputs \['x'\]; "
                                            r"missing \['x'\]$"):
        og.Session(model).run_signature("serving")
    with pytest.raises(OneGraphError, match=r"missing \['x'\], unknown \['z'\]$"):
        og.Session(model).run_signature("serving", z=np.zeros(5, np.float32))
    og.save(model, tmp_path / "m.og")
    assert main(["run", str(tmp_path / "m.og")]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "--input: signature 'serving' takes inputs ['x']; missing ['x']")

"""Malformed or hostile ONNX input raises ConversionError naming what is wrong."""

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onegraph.convert import from_onnx
from onegraph.errors import ConversionError


def _model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _add_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    w = numpy_helper.from_array(np.arange(2, dtype=np.float32), "w")
    return _model([helper.make_node("Add", ["x", "w"], ["y"], name="add0")], [x], [y], [w])


def test_valid_model_imports():
    model = from_onnx(_add_model())
    assert model.signatures["serving"].inputs.keys() == {"x"}


def test_truncated_protobuf(tmp_path):
    data = _add_model().SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ConversionError, match="protobuf|valid ONNX"):
        from_onnx(str(path))
    with pytest.raises(ConversionError):
        from_onnx(data[:-7])


def test_garbage_bytes():
    with pytest.raises(ConversionError):
        from_onnx(b"\xff\x00not a model at all\x12")


def test_missing_initializer():
    m = _add_model()
    del m.graph.initializer[:]
    with pytest.raises(ConversionError, match=r"add0.*'w'"):
        from_onnx(m)


def test_wrong_attribute_type():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    node = helper.make_node("Softmax", ["x"], ["y"], name="sm")
    node.attribute.append(helper.make_attribute("axis", 1.5))
    with pytest.raises(ConversionError, match=r"sm.*axis.*int"):
        from_onnx(_model([node], [x], [y]))


def test_unknown_attribute():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    node = helper.make_node("Relu", ["x"], ["y"], name="r", bogus=3)
    with pytest.raises(ConversionError, match=r"'r'.*bogus"):
        from_onnx(_model([node], [x], [y]))


def test_unsupported_ops_listed_in_one_error():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    nodes = [helper.make_node("FancyOpA", ["x"], ["a"], name="fa1", domain="acme"),
             helper.make_node("FancyOpA", ["a"], ["b"], name="fa2", domain="acme"),
             helper.make_node("FancyOpB", ["b"], ["c"], name="fb1", domain="acme"),
             helper.make_node("Relu", ["c"], ["y"], name="r")]
    m = _model(nodes, [x], [y])
    m.opset_import.append(helper.make_opsetid("acme", 1))
    with pytest.raises(ConversionError) as info:
        from_onnx(m)
    msg = str(info.value)
    assert "acme::FancyOpA x2" in msg and "fa1" in msg
    assert "acme::FancyOpB x1" in msg and "fb1" in msg


def _external_model(folder, location):
    """A model whose initializer 'w' points at external data `location`."""
    m = _add_model()
    w = m.graph.initializer[0]
    w.ClearField("raw_data")
    w.ClearField("float_data")
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", "8")):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    path = os.path.join(folder, "model.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return path


def test_external_data_inside_folder(tmp_path):
    (tmp_path / "w.bin").write_bytes(np.array([5, 6], np.float32).tobytes())
    model = from_onnx(_external_model(str(tmp_path), "w.bin"))
    np.testing.assert_array_equal(model.graph.tensor("w").data, [5, 6])


def test_external_data_absolute_path(tmp_path):
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"\0" * 8)
    folder = tmp_path / "m"
    folder.mkdir()
    with pytest.raises(ConversionError, match="'w'.*escapes"):
        from_onnx(_external_model(str(folder), str(outside)))


def test_external_data_dotdot(tmp_path):
    (tmp_path / "outside.bin").write_bytes(b"\0" * 8)
    folder = tmp_path / "m"
    folder.mkdir()
    with pytest.raises(ConversionError, match="'w'.*escapes"):
        from_onnx(_external_model(str(folder), "../outside.bin"))


def test_external_data_symlink(tmp_path):
    (tmp_path / "outside.bin").write_bytes(b"\0" * 8)
    folder = tmp_path / "m"
    folder.mkdir()
    os.symlink(tmp_path / "outside.bin", folder / "link.bin")
    with pytest.raises(ConversionError, match="'w'.*outside"):
        from_onnx(_external_model(str(folder), "link.bin"))


def test_external_data_length_beyond_file(tmp_path):
    (tmp_path / "w.bin").write_bytes(b"\0" * 4)
    with pytest.raises(ConversionError, match="'w'.*out of"):
        from_onnx(_external_model(str(tmp_path), "w.bin"))


def test_external_data_from_bytes_refused(tmp_path):
    (tmp_path / "w.bin").write_bytes(b"\0" * 8)
    path = _external_model(str(tmp_path), "w.bin")
    with pytest.raises(ConversionError, match="not loaded from a file"):
        from_onnx(open(path, "rb").read())


def test_old_opset_is_upgraded():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    m = _model([helper.make_node("Relu", ["x"], ["y"])], [x], [y], opset=9)
    model = from_onnx(m)
    assert model.opset_imports[""] >= 13


def test_unconvertible_opset_is_a_clear_error():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    # GivenTensorFill was an experimental op nobody runs any more (onnxruntime neither):
    # onnx's converter has no schema to carry it
    m = _model([helper.make_node("GivenTensorFill", ["x"], ["y"])], [x], [y], opset=9)
    with pytest.raises(ConversionError, match=r"1 unsupported op type\(s\): GivenTensorFill "
                                              r"x1 .*the model uses opset 9"):
        from_onnx(m)
    # ImageScaler too was dropped, but onnxruntime still runs it: it is spelled in
    # standard ops, and one without its required bias is named
    m = _model([helper.make_node("ImageScaler", ["x"], ["y"])], [x], [y], opset=9)
    with pytest.raises(ConversionError, match=r"ImageScaler node .*'bias' is missing"):
        from_onnx(m)

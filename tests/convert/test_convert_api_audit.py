"""Findings of an audit of from_onnx / to_onnx's Python API by a user who knows onnx's
own tools: paths in every spelling, models with external data, opset choices."""

import os

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from onegraph.convert import from_onnx, to_onnx
from onegraph.errors import ConversionError

from ..small_onnx import matmul_proto


def test_a_path_given_as_bytes_is_named_as_one(tmp_path):
    # to_onnx and og.load take a bytes path; from_onnx reads bytes as the serialized
    # model (documented), and its refusal of a bytes path said only that protobuf
    # could not parse them
    path = tmp_path / "m.onnx"
    onnx.save(matmul_proto(), str(path))
    with pytest.raises(ConversionError, match="not a valid ONNX model") as e:
        from_onnx(os.fsencode(path))
    message = str(e.value)
    assert "file path" in message and "str or os.PathLike" in message
    assert repr(str(path)) in message


@pytest.mark.parametrize("data", [b"\x00\x01garbage", b"/no/such/file.txt"])
def test_bytes_that_are_no_path_keep_the_plain_message(data):
    with pytest.raises(ConversionError, match="not a valid ONNX model") as e:
        from_onnx(data)
    assert "file path" not in str(e.value)


def test_the_model_bytes_and_every_path_spelling_import_alike(tmp_path):
    path = tmp_path / "m.onnx"
    proto = matmul_proto()
    onnx.save(proto, str(path))
    w = numpy_helper.to_array(proto.graph.initializer[0])
    for arg in (str(path), path, proto, proto.SerializeToString(),
                bytearray(proto.SerializeToString())):
        model = from_onnx(arg)
        (t,) = [t for t in model.graph.tensors if t.name == "w"]
        np.testing.assert_array_equal(t.data, w)


def test_external_data_round_trips_as_onnxruntime_reads_it(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    src = tmp_path / "src.onnx"
    onnx.save(matmul_proto(), str(src), save_as_external_data=True, location="src.bin",
              size_threshold=0)
    out = tmp_path / "out.onnx"
    to_onnx(from_onnx(src), out, opset=13, external_data_threshold=0)
    assert (tmp_path / "out.onnx.data").exists()
    xv = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    want = xv @ np.arange(8, dtype=np.float32).reshape(4, 2)
    (got,) = ort.InferenceSession(str(out)).run(None, {"x": xv})
    np.testing.assert_allclose(got, want, rtol=1e-6)

"""A .og file given where ONNX goes, and an ONNX file given where a .og file goes, are
named for what they are, in the API and in the CLI."""

import subprocess
import sys

import numpy as np
import pytest

import onegraph as og

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from onegraph.convert import from_onnx  # noqa: E402


def _og_file(tmp_path):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder("float32", [2], name="x")
        og.identity(x, name="y")
    path = tmp_path / "m.og"
    og.save(g.to_model(), str(path))
    return path


def _onnx_model(producer=""):
    node = helper.make_node("Neg", ["x"], ["y"])
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    return helper.make_model(graph, producer_name=producer,
                             opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("as_bytes", [False, True])
def test_from_onnx_names_a_og_file(tmp_path, as_bytes):
    path = _og_file(tmp_path)
    source = path.read_bytes() if as_bytes else str(path)
    with pytest.raises(og.ConversionError, match=r"is a onegraph \.og file, not an ONNX "
                                                 r"model; load it with onegraph\.load"):
        from_onnx(source)


def test_an_onnx_model_whose_bytes_look_like_the_og_identifier_still_imports():
    # bytes 4-8 of this ModelProto are its producer_name's first four: the identifier
    # is only consulted for bytes that are no ONNX model
    proto = _onnx_model(producer="OGF1 tools")
    data = proto.SerializeToString()
    assert data[4:8] == b"OGF1"
    model = from_onnx(data)
    x = np.array([1.0, -2.0], np.float32)
    assert og.Session(model).run("y", {"x": x}).tolist() == [-1.0, 2.0]


def test_load_of_an_onnx_file_says_it_looks_like_onnx(tmp_path):
    path = tmp_path / "model.og"  # the extension does not decide: the bytes do
    path.write_bytes(_onnx_model().SerializeToString())
    with pytest.raises(og.FormatError) as info:
        og.load(str(path))
    text = str(info.value)
    assert "not a .og model" in text
    assert f"it starts like an ONNX model (ir_version {onnx.IR_VERSION}" in text
    assert "onegraph.convert.from_onnx" in text


def test_load_of_other_bytes_gets_no_onnx_hint(tmp_path):
    path = tmp_path / "random.og"
    path.write_bytes(bytes(range(64)))
    with pytest.raises(og.FormatError) as info:
        og.load(str(path))
    assert "ONNX" not in str(info.value)


def test_cli_run_of_an_onnx_file_gives_one_hint(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(_onnx_model().SerializeToString())
    done = subprocess.run([sys.executable, "-m", "onegraph.cli", "run", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    err = done.stderr.strip()
    assert "\n" not in err and "Traceback" not in err
    assert err.count("ONNX model") == 1, err
    assert f"onegraph convert {path} {tmp_path / 'm.og'}" in err

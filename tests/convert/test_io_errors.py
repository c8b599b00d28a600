"""Files that cannot be read or written, and arguments of the wrong type, across
from_onnx/to_onnx, og.load/og.save, the inference entry points and the CLI: one
sentence for one failure ("cannot read 'PATH': No such file or directory"), and a
named error type (audit /tmp/hunt_api findings 3, 9 and 10).

The rule: og.load/og.save raise the OSError subclass the system gave, worded so;
from_onnx/to_onnx raise ConversionError with the same sentence; the CLI prints
`onegraph <command>: <ErrorType>: <that sentence>`."""

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onegraph as og
from onegraph.cli import main
from onegraph.convert import from_onnx, to_onnx
from onegraph.errors import ConversionError, FormatError
from onegraph.format import Graph, Model
from onegraph.ops.inference import annotate_graph, infer_graph


def _proto():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    b = numpy_helper.from_array(np.full((3,), 0.5, np.float32), "b")
    nodes = [helper.make_node("Add", ["x", "b"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    return helper.make_model(helper.make_graph(nodes, "g", [x], [y], [b]),
                             opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture
def model():
    return from_onnx(_proto())


def _cli_error(capsys, argv):
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    return err[0]


# -- reads ------------------------------------------------------------------------------

def test_from_onnx_words_a_missing_file_as_og_load_and_the_cli_do(tmp_path, capsys):
    path = str(tmp_path / "nope.onnx")
    sentence = f"cannot read {path!r}: No such file or directory"
    with pytest.raises(ConversionError) as info:
        from_onnx(path)
    assert str(info.value) == sentence  # was: the path twice and "[Errno 2]"
    with pytest.raises(FileNotFoundError) as info:
        og.load(str(tmp_path / "nope.onnx"))
    assert str(info.value) == sentence
    assert _cli_error(capsys, ["convert", path, tmp_path / "o.og"]) == \
        f"onegraph convert: ConversionError: {sentence}"
    assert _cli_error(capsys, ["info", path]) == f"onegraph info: FileNotFoundError: {sentence}"


def test_from_onnx_of_a_folder_and_a_nul_path(tmp_path):
    with pytest.raises(ConversionError, match=f"^cannot read {str(tmp_path)!r}: Is a "
                                              "directory$"):
        from_onnx(str(tmp_path))
    with pytest.raises(ConversionError, match="^cannot read .*: the path contains a NUL"):
        from_onnx(str(tmp_path / "a\0b.onnx"))


# -- writes -----------------------------------------------------------------------------

def test_to_onnx_words_a_missing_folder_as_og_save_does(tmp_path, model):
    path = str(tmp_path / "no" / "x.onnx")
    sentence = f"cannot write {path!r}: the folder does not exist"
    with pytest.raises(ConversionError) as info:
        to_onnx(model, path)
    assert str(info.value) == sentence
    with pytest.raises(FileNotFoundError) as info:
        og.save(model, path)
    assert str(info.value) == sentence
    assert not os.path.exists(tmp_path / "no")


def test_to_onnx_of_a_folder(tmp_path, model):
    with pytest.raises(ConversionError, match=f"^cannot write {str(tmp_path)!r}: is a "
                                              "directory$"):
        to_onnx(model, tmp_path)


def test_to_onnx_takes_bytes_paths_and_refuses_nul_bytes(tmp_path, model, monkeypatch):
    to_onnx(model, os.fsencode(tmp_path / "b.onnx"))
    assert onnx.load(str(tmp_path / "b.onnx")).graph.node[0].op_type == "Add"
    # a short relative path: the message shows paths of up to 80 characters whole, and
    # tmp_path's length varies from run to run
    monkeypatch.chdir(tmp_path)
    bad = "a\0b.onnx"
    with pytest.raises(ConversionError) as info:
        to_onnx(model, bad)
    assert str(info.value) == f"cannot write {bad!r}: the path contains a NUL byte"
    with pytest.raises(TypeError, match="a file path must be a str, bytes or os.PathLike"):
        to_onnx(model, 3)
    assert sorted(os.listdir(tmp_path)) == ["b.onnx"]


@pytest.mark.parametrize("threshold", ["1", 1.5, None, True])
def test_to_onnx_external_data_threshold_must_be_an_int(tmp_path, model, threshold):
    with pytest.raises(TypeError, match="to_onnx: external_data_threshold must be an int"):
        to_onnx(model, tmp_path / "m.onnx", external_data_threshold=threshold)
    with pytest.raises(ConversionError, match="external_data_threshold must be an integer "
                                              ">= 0"):
        to_onnx(model, tmp_path / "m.onnx", external_data_threshold=-1)
    assert os.listdir(tmp_path) == []
    to_onnx(model, tmp_path / "m.onnx", external_data_threshold=np.int64(0))
    assert sorted(os.listdir(tmp_path)) == ["m.onnx", "m.onnx.data"]


def test_write_trace_takes_bytes_paths(tmp_path):
    md = og.RunMetadata()
    md.write_trace(os.fsencode(tmp_path / "t.json"))
    assert (tmp_path / "t.json").read_text().startswith('{"traceEvents"')
    with pytest.raises(FileNotFoundError, match="^cannot write .*: the folder does not"):
        md.write_trace(str(tmp_path / "no" / "t.json"))


# -- a model without graphs -------------------------------------------------------------

def test_a_model_without_graphs_is_a_format_error_naming_its_file(tmp_path, capsys):
    path = tmp_path / "empty.og"
    og.save(Model(), path)
    with pytest.raises(FormatError, match="^model has no graphs$"):
        to_onnx(Model())
    with pytest.raises(FormatError, match=f"^{path}: model has no graphs$"):
        to_onnx(og.load(path))
    assert _cli_error(capsys, ["convert", path, tmp_path / "o.onnx"]) == \
        f"onegraph convert: FormatError: {path}: model has no graphs"
    assert _cli_error(capsys, ["run", path]).endswith(f"{path}: model has no graphs")


# -- inference entry points -------------------------------------------------------------

@pytest.mark.parametrize("fn", [annotate_graph, infer_graph])
def test_inference_refuses_what_is_not_a_graph(fn, model):
    with pytest.raises(TypeError, match=f"{fn.__name__}: expected a onegraph.format.Graph, "
                                        r"got .*Model \(pass model.graph"):
        fn(model)
    with pytest.raises(TypeError, match="got builtins.NoneType"):
        fn(None)
    g = og.Graph()
    with pytest.raises(TypeError, match=r"an og.Graph: pass graph.to_model\(\).graph"):
        fn(g)
    # on a graph it works: s = x + b and y = Relu(s) are FLOAT32 [2, 3]
    graph = model.graph
    result = fn(graph)
    if fn is annotate_graph:
        assert result is graph
        infos = [(t.dtype, tuple(t.shape)) for t in graph.tensors]
    else:
        infos = [(i.dtype, tuple(i.shape)) for i in result]
    for name in ("s", "y"):
        dtype, shape = infos[graph.find_tensor(name)]
        assert np.dtype(getattr(dtype, "numpy", dtype)) == np.float32 and shape == (2, 3)


def test_infer_graph_inputs_must_be_a_mapping(model):
    with pytest.raises(TypeError, match="infer_graph: inputs must be a mapping"):
        infer_graph(model.graph, inputs=[1])


# -- the CLI's usage errors -------------------------------------------------------------

@pytest.mark.parametrize("argv, words", [
    ([], "onegraph: error: the following arguments are required: command "
         "(see 'onegraph --help')"),
    (["run"], "onegraph run: error: the following arguments are required: model "
              "(see 'onegraph run --help')"),
    (["run", "m.og", "--runs", "x"], "onegraph run: error: argument --runs: invalid int "
                                     "value: 'x' (see 'onegraph run --help')"),
])
def test_usage_errors_are_one_line(capsys, argv, words):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert capsys.readouterr().err.strip().splitlines() == [words]


def test_help_still_prints_the_usage(capsys):
    with pytest.raises(SystemExit) as info:
        main(["run", "--help"])
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith("usage: onegraph run ")

"""Bad Python arguments to the format API: a named error from onegraph's own code,
saying what is wrong and where, never numpy's or flatbuffers' raw exception
(audit /tmp/hunt_api findings 2, 3, 4, 9 and 10)."""

import errno
import os
import pickle

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import FormatError
from onegraph.format import DType, Graph, Model, Node, Tensor, TensorKind, save_model, serialize
from onegraph.format.atomic import atomic_open, check_writable


def _model():
    g = Graph("main")
    x = g.add_input("x", "float32", [2])
    (y,) = g.add_node("Relu", [x], ["y"])
    g.outputs = [y]
    m = Model(graphs=[g], opset_imports={"": 21})
    m.add_signature("serving", inputs={"x": x}, outputs={"y": y})
    return m


# -- finding 2: dtype spellings ------------------------------------------------------

@pytest.mark.parametrize("value", ["float33", "FLOAT", "nope", 5, "("])
def test_unknown_dtype_is_a_format_error_in_the_train_sides_words(value):
    with pytest.raises(FormatError) as info:
        DType.parse(value)
    assert str(info.value) == f"unknown dtype {value!r}"
    with pytest.raises(FormatError, match="unknown dtype"):
        DType.from_numpy(value)


def test_none_is_not_a_dtype():
    """np.dtype(None) is float64: None must not quietly mean float64"""
    with pytest.raises(FormatError, match="unknown dtype None"):
        DType.parse(None)
    with pytest.raises(FormatError, match="unknown dtype None"):
        DType.from_numpy(None)
    with pytest.raises(FormatError, match="tensor 'x': unknown dtype None"):
        Graph().add_input("x", None, [1])


def test_unknown_dtype_names_the_tensor():
    with pytest.raises(FormatError) as info:
        Graph().add_input("x", "float33", [1])
    assert str(info.value) == "tensor 'x': unknown dtype 'float33'"


def test_known_dtype_spellings_still_work():
    assert DType.parse("FLOAT32") is DType.FLOAT32
    assert DType.parse("float32") is DType.FLOAT32
    assert DType.parse(np.float16) is DType.FLOAT16
    assert DType.parse("float") is DType.FLOAT64  # numpy's meaning, documented
    with pytest.raises(FormatError, match="complex64 has no onegraph equivalent"):
        DType.parse("c8")


# -- finding 4: shapes and constant values -------------------------------------------

@pytest.mark.parametrize("shape", [4, "ab", 2.0, {"a": 1}])
def test_a_shape_that_is_not_a_sequence_is_a_type_error_naming_the_tensor(shape):
    with pytest.raises(TypeError, match=r"tensor 'x': shape must be a sequence of ints"):
        Graph().add_input("x", "float32", shape)


@pytest.mark.parametrize("shape", [[2.5], ["3"], [True], [[2]]])
def test_a_dimension_that_is_not_an_int_is_a_type_error(shape):
    with pytest.raises(TypeError, match=r"tensor 'x': dimension 0 of shape .* not an int"):
        Graph().add_input("x", "float32", shape)


def test_none_dims_are_unknown_as_in_og_placeholder():
    g = Graph()
    i = g.add_input("x", "float32", [None, 4])
    assert g.tensors[i].shape == (-1, 4)
    j = g.add_input("y", "float32", np.array([2, 3]))
    assert g.tensors[j].shape == (2, 3) and all(type(d) is int for d in g.tensors[j].shape)
    assert g.add_input("z", "float32", None) == 2 and g.tensors[2].shape is None


def test_ragged_constant_is_a_format_error_naming_it():
    with pytest.raises(FormatError) as info:
        Graph().add_constant("c", [[1], [1, 2]])
    assert str(info.value) == ("graph 'main': constant 'c': the value is not an array of "
                               "one shape (nested sequences of different lengths)")
    with pytest.raises(FormatError, match="constant 'z': numpy dtype complex128 has no"):
        Graph().add_constant("z", [1j])


# -- finding 9: functions taking a model or graph check its type -------------------

@pytest.mark.parametrize("bad", [None, Graph(), "m.og"])
def test_serialize_and_save_model_refuse_what_is_not_a_model(bad, tmp_path):
    with pytest.raises(TypeError, match=f"cannot serialize a {type(bad).__name__}; "
                                        "expected a Model"):
        serialize(bad)
    with pytest.raises(TypeError, match=f"cannot save a {type(bad).__name__}; "
                                        "expected a Model"):
        save_model(bad, tmp_path / "x.og")
    assert os.listdir(tmp_path) == []


def test_add_signature_checks_its_arguments():
    m = _model()
    with pytest.raises(TypeError, match="signature 's': graph must be a graph index"):
        m.add_signature("s", graph="0")
    with pytest.raises(FormatError, match=r"signature 's': graph 5 out of range \(the "
                                          r"model has 1 graphs\)"):
        m.add_signature("s", graph=5)
    with pytest.raises(FormatError, match="graph -1 out of range"):
        m.add_signature("s", graph=-1)
    with pytest.raises(TypeError, match="signature 's': inputs must be a mapping"):
        m.add_signature("s", inputs=["x"])
    with pytest.raises(TypeError, match="signature 's': outputs must be a mapping"):
        m.add_signature("s", outputs="y")
    with pytest.raises(TypeError, match="signature 's': targets must be node indices"):
        m.add_signature("s", targets=["Relu_0"])
    with pytest.raises(TypeError, match="signature 's': targets must be a sequence"):
        m.add_signature("s", targets=0)
    with pytest.raises(TypeError, match="add_signature: name must be a str"):
        m.add_signature(None)
    with pytest.raises(TypeError, match=r"a tensor is given by its index \(int\) or name"):
        m.add_signature("s", inputs={"x": ["x"]})
    assert set(m.signatures) == {"serving"}
    assert m.add_signature("s", inputs={"x": "x"}, targets=[0]).inputs == {"x": 0}


@pytest.mark.parametrize("mutate, words", [
    (lambda g: g.tensors.append(1), "graph 'main'.tensors[2]: int is not a Tensor"),
    (lambda g: g.nodes.append("Relu"), "graph 'main'.nodes[1]: str is not a Node"),
    (lambda g: setattr(g, "tensors", None), "graph 'main'.tensors: NoneType is not a list"),
    (lambda g: setattr(g.nodes[0], "inputs", 0), "nodes[0] ('Relu').inputs: int is not"),
    (lambda g: setattr(g.nodes[0], "attributes", [1]), "('Relu').attributes: list is not"),
    (lambda g: g.tensors.append(Tensor("c", "float32", [2], TensorKind.CONSTANT,
                                       data=[1.0, 2.0])),
     "graph 'main'.tensors[2] ('c').data: list is not a numpy array"),
    (lambda g: setattr(g.tensors[0], "dtype", "float32"), "('x').dtype: str is not a DType"),
    (lambda g: setattr(g.tensors[0], "shape", 2), "('x').shape: 2 is not a sequence of ints"),
    (lambda g: setattr(g.tensors[0], "quantization", 1.0), "('x').quantization: float is"),
])
def test_lint_refuses_entries_of_the_wrong_type(mutate, words, tmp_path):
    m = _model()
    mutate(m.graph)
    with pytest.raises(FormatError) as info:
        m.graph.lint()
    assert words in str(info.value)
    with pytest.raises(FormatError):
        og.save(m, tmp_path / "x.og")
    assert os.listdir(tmp_path) == []


def test_model_lint_refuses_graphs_and_signatures_of_the_wrong_type():
    m = _model()
    m.graphs.append(None)
    with pytest.raises(FormatError, match=r"graphs\[1\]: NoneType is not a Graph"):
        m.lint()
    m = _model()
    m.signatures["s"] = {"x": 0}
    with pytest.raises(FormatError, match=r"signatures\['s'\]: dict is not a Signature"):
        m.lint()
    m = _model()
    m.metadata = None
    with pytest.raises(FormatError, match="metadata: NoneType is not a mapping"):
        m.lint()


# -- finding 3: one wording for files that cannot be read or written -----------------

def test_load_of_a_missing_file_keeps_its_type_with_the_clis_words(tmp_path):
    path = str(tmp_path / "nope.og")
    with pytest.raises(FileNotFoundError) as info:
        og.load(path)
    e = info.value
    assert str(e) == f"cannot read {path!r}: No such file or directory"
    assert (e.errno, e.strerror, e.filename) == (errno.ENOENT, "No such file or directory",
                                                 path)
    assert type(e).__name__ == "FileNotFoundError"
    with pytest.raises(IsADirectoryError, match=f"cannot read {str(tmp_path)!r}: Is a "
                                                "directory"):
        og.load(tmp_path)


def test_save_to_a_missing_folder_keeps_its_type_with_the_same_words(tmp_path):
    path = str(tmp_path / "no" / "x.og")
    with pytest.raises(FileNotFoundError) as info:
        og.save(_model(), path)
    assert str(info.value) == f"cannot write {path!r}: the folder does not exist"
    assert info.value.filename == path and info.value.errno == errno.ENOENT
    with pytest.raises(IsADirectoryError, match=f"cannot write {str(tmp_path)!r}: is a "
                                                "directory"):
        og.save(_model(), tmp_path)
    with pytest.raises(FileNotFoundError, match="cannot write"):
        check_writable(path)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_a_refused_write_is_worded_alike():
    with pytest.raises(OSError) as info:
        og.save(_model(), "/proc/onegraph-test.og")
    assert str(info.value).startswith("cannot write '/proc/onegraph-test.og': ")
    assert "Errno" not in str(info.value)


def test_worded_errors_pickle_with_their_words(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        og.load(tmp_path / "nope.og")
    back = pickle.loads(pickle.dumps(info.value))
    assert isinstance(back, FileNotFoundError) and str(back) == str(info.value)
    assert back.filename == info.value.filename


def test_a_model_without_graphs_names_its_file(tmp_path):
    og.save(Model(), tmp_path / "empty.og")
    m = og.load(tmp_path / "empty.og")
    with pytest.raises(FormatError) as info:
        m.graph
    assert str(info.value) == f"{tmp_path / 'empty.og'}: model has no graphs"
    with pytest.raises(FormatError, match="^model has no graphs$"):
        Model().graph


# -- finding 10: bytes paths and NUL bytes --------------------------------------------

def test_bytes_paths_are_accepted_by_save_and_load_alike(tmp_path):
    path = os.fsencode(tmp_path / "b.og")
    assert og.save(_model(), path) > 0
    m = og.load(path)
    assert m.path == os.fsdecode(path) and m.graph.tensors[0].name == "x"
    with atomic_open(os.fsencode(tmp_path / "t.txt"), "w") as f:
        f.write("ok")
    assert (tmp_path / "t.txt").read_text() == "ok"
    with pytest.raises(FileNotFoundError, match=f"cannot read {str(tmp_path / 'no.og')!r}"):
        og.load(os.fsencode(tmp_path / "no.og"))


def test_nul_bytes_in_paths_are_refused_in_the_same_words(tmp_path, monkeypatch):
    # a short relative path: the message shows paths of up to 80 characters whole, and
    # tmp_path's length varies from run to run
    monkeypatch.chdir(tmp_path)
    bad = "a\0b.og"
    with pytest.raises(ValueError) as info:
        og.save(_model(), bad)
    assert str(info.value) == f"cannot write {bad!r}: the path contains a NUL byte"
    with pytest.raises(ValueError, match="cannot read .*: the path contains a NUL byte"):
        og.load(bad)
    with pytest.raises(ValueError, match="the path contains a NUL byte"):
        og.load(os.fsencode(bad))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("path", [None, 3, 1.5])
def test_a_path_of_the_wrong_type_is_a_type_error(path):
    with pytest.raises(TypeError, match="a file path must be a str, bytes or os.PathLike"):
        og.save(_model(), path)
    with pytest.raises(TypeError, match="a file path must be a str, bytes or os.PathLike"):
        og.load(path)


def test_dir_lists_no_module_imports():
    names = dir(og)
    assert "os" not in names and "annotations" not in names
    assert {"load", "save", "Session", "placeholder", "FormatError"} <= set(names)

"""`onegraph convert` and `onegraph run` end to end (in-process via cli.main)."""

import json
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onegraph.cli import main

from ..trainable import save_linear_trainable


def _onnx_file(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    b = numpy_helper.from_array(np.full((3,), 0.5, np.float32), "b")
    nodes = [helper.make_node("Add", ["x", "b"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    m = helper.make_model(helper.make_graph(nodes, "g", [x], [y], [b]),
                          opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, path)


def test_convert_both_ways_and_run(tmp_path, capsys):
    src = str(tmp_path / "m.onnx")
    _onnx_file(src)
    assert main(["convert", src, str(tmp_path / "m.og")]) == 0
    assert main(["convert", str(tmp_path / "m.og"), str(tmp_path / "back.onnx"),
                 "--opset", "18"]) == 0
    back = onnx.load(str(tmp_path / "back.onnx"))
    assert [o.version for o in back.opset_import if o.domain == ""] == [18]
    x = np.array([[-1, 0, 1], [2, -3, 4]], np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "m.og"), "--input", f"x={tmp_path / 'x.npy'}",
                 "--output-dir", str(out)]) == 0
    np.testing.assert_array_equal(np.load(out / "y.npy"), np.maximum(x + 0.5, 0))
    assert main(["run", str(tmp_path / "m.og"), "--input", f"x={tmp_path / 'x.npy'}"]) == 0
    assert "y: float32[2, 3]" in capsys.readouterr().out


def test_errors_are_one_line_and_nonzero(tmp_path, capsys):
    src = str(tmp_path / "m.onnx")
    _onnx_file(src)
    assert main(["convert", src, str(tmp_path / "m.txt")]) != 0
    (tmp_path / "bad.onnx").write_bytes(b"\x0a\xff\xff")
    assert main(["convert", str(tmp_path / "bad.onnx"), str(tmp_path / "x.og")]) != 0
    main(["convert", src, str(tmp_path / "m.og")])
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    assert main(["run", str(tmp_path / "m.og"), "--input",
                 f"x={tmp_path / 'obj.npy'}"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err and all(line.startswith("onegraph ") for line in err)


def test_convert_no_check_exports_what_the_checker_refuses(tmp_path, capsys, monkeypatch):
    """A model the checker refuses (here a checker that refuses Relu, standing in for
    onnx versions whose function bodies fail their own check): the default export says
    so and writes nothing, --no-check (to_onnx's check=False) writes it, and
    onnxruntime matches the original."""
    import onnxruntime as ort

    src = str(tmp_path / "m.onnx")
    _onnx_file(src)
    model = onnx.load(src)
    assert main(["convert", src, str(tmp_path / "m.og")]) == 0
    real_check = onnx.checker.check_model

    def refuse_relu(proto, *args, **kwargs):
        m = onnx.load(proto) if isinstance(proto, str) else proto
        if any(n.op_type == "Relu" for n in m.graph.node):
            raise onnx.checker.ValidationError("Relu: refused by this checker")
        return real_check(proto, *args, **kwargs)

    monkeypatch.setattr(onnx.checker, "check_model", refuse_relu)
    back = tmp_path / "back.onnx"
    assert main(["convert", str(tmp_path / "m.og"), str(back)]) != 0
    assert "fails the ONNX checker" in capsys.readouterr().err
    assert not back.exists()
    assert main(["convert", str(tmp_path / "m.og"), str(back), "--no-check"]) == 0
    xv = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)

    def run(m):
        sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        return sess.run(None, {"x": xv})[0]

    np.testing.assert_allclose(run(onnx.load(back)), run(model), rtol=1e-5, atol=1e-6)
    assert main(["convert", src, str(tmp_path / "again.og"), "--no-check"]) != 0
    assert "--no-check applies to export" in capsys.readouterr().err


def test_run_input_names_and_paths_holding_an_equals_sign(tmp_path):
    """--input splits at the first "=" (a path may hold one), unless a later one ends
    a known input name (an input named "a=b")."""
    x = helper.make_tensor_value_info("a=b", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Neg", ["a=b"], ["y"])], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, tmp_path / "m.onnx")
    assert main(["convert", str(tmp_path / "m.onnx"), str(tmp_path / "m.og")]) == 0
    folder = tmp_path / "lr=0.1"
    folder.mkdir()
    np.save(folder / "x.npy", np.array([1.0, -2.0], np.float32))
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "m.og"), "--input", f"a=b={folder / 'x.npy'}",
                 "--output-dir", str(out)]) == 0
    np.testing.assert_array_equal(np.load(out / "y.npy"), [-1.0, 2.0])


def test_run_overrides_a_graph_input_with_a_default_value(tmp_path, capsys):
    """An initializer listed as a graph input is a default the caller may feed (as
    Session.run and onnxruntime allow); the serving signature does not list it, and
    --input takes it by its name. Bad values name the signature key."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    w = helper.make_tensor_value_info("w", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], "g", [x, w], [y],
        [numpy_helper.from_array(np.array([10, 20], np.float32), "w")]),
        opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, tmp_path / "m.onnx")
    assert main(["convert", str(tmp_path / "m.onnx"), str(tmp_path / "m.og")]) == 0
    np.save(tmp_path / "x.npy", np.ones(2, np.float32))
    np.save(tmp_path / "w.npy", np.array([5, 5], np.float32))
    out = tmp_path / "out"
    run = ["run", str(tmp_path / "m.og"), "--input", f"x={tmp_path / 'x.npy'}",
           "--output-dir", str(out)]
    assert main(run) == 0
    np.testing.assert_array_equal(np.load(out / "y.npy"), [11, 21])
    assert main(run + ["--input", f"w={tmp_path / 'w.npy'}"]) == 0
    np.testing.assert_array_equal(np.load(out / "y.npy"), [6, 6])
    capsys.readouterr()
    np.save(tmp_path / "bad.npy", np.ones(3, np.float32))
    assert main(["run", str(tmp_path / "m.og"), "--input", f"x={tmp_path / 'bad.npy'}"]) == 2
    _, line = _one_error_line(capsys)
    assert "signature 'serving' input 'x'" in line and "shape [3]" in line


def _two_outputs(tmp_path):
    """m2.og: x [2] -> a = -x, z = relu(x); and x.npy."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in ("a", "z")]
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Neg", ["x"], ["a"]), helper.make_node("Relu", ["x"], ["z"])],
        "g", [x], outs), opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, tmp_path / "m2.onnx")
    assert main(["convert", str(tmp_path / "m2.onnx"), str(tmp_path / "m2.og")]) == 0
    np.save(tmp_path / "x.npy", np.array([-1.0, 2.0], np.float32))
    return ["run", str(tmp_path / "m2.og"), "--input", f"x={tmp_path / 'x.npy'}"]


def _one_error_line(capsys):
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return out, lines[0]


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc, which nobody can "
                    "write into")
def test_run_checks_trace_and_output_dir_before_running(tmp_path, capsys):
    run = _two_outputs(tmp_path)
    capsys.readouterr()
    out = tmp_path / "out"
    assert main(run + ["--output-dir", str(out), "--trace", "/proc/t.json"]) == 2
    stdout, err = _one_error_line(capsys)
    assert err.startswith("onegraph run: OneGraphError: --trace /proc/t.json: cannot write")
    assert ".tmp" not in err and stdout == "" and not out.exists()  # nothing ran
    (tmp_path / "file").write_bytes(b"")
    assert main(run + ["--output-dir", str(tmp_path / "file" / "out")]) == 2
    stdout, err = _one_error_line(capsys)
    assert "--output-dir" in err and "cannot create files there" in err and stdout == ""
    assert main(run + ["--output-dir", "/proc/out"]) == 2
    assert "--output-dir /proc/out" in _one_error_line(capsys)[1]


def test_run_writes_all_outputs_or_none(tmp_path, capsys):
    run = _two_outputs(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    np.save(out / "a.npy", np.zeros(5))  # a previous result
    (out / "z.npy").mkdir()  # the second output cannot be written
    capsys.readouterr()
    assert main(run + ["--output-dir", str(out)]) == 2
    np.testing.assert_array_equal(np.load(out / "a.npy"), np.zeros(5))  # kept whole
    assert sorted(os.listdir(out)) == ["a.npy", "z.npy"]  # and no temp file
    stdout, err = _one_error_line(capsys)
    assert err.startswith("onegraph run: OneGraphError: --output-dir ") and "z.npy" in err
    assert "a.npy" not in stdout
    (out / "z.npy").rmdir()
    assert main(run + ["--output-dir", str(out)]) == 0
    np.testing.assert_array_equal(np.load(out / "a.npy"), [1.0, -2.0])
    np.testing.assert_array_equal(np.load(out / "z.npy"), [0.0, 2.0])


def test_run_removes_the_output_dir_it_made_when_writing_fails(tmp_path, capsys,
                                                              monkeypatch):
    import errno

    import onegraph.format.atomic as atomic

    run = _two_outputs(tmp_path)

    def disk_full(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device", src, dst)

    monkeypatch.setattr(atomic.os, "replace", disk_full)
    capsys.readouterr()
    assert main(run + ["--output-dir", str(tmp_path / "new" / "out")]) == 2
    _, err = _one_error_line(capsys)
    assert "No space left on device" in err and ".tmp" not in err
    assert not (tmp_path / "new").exists()


def _trainable(tmp_path):
    save_linear_trainable(tmp_path / "t.og")
    np.savez(tmp_path / "d.npz", x=np.ones((8, 3), np.float32),
             y=np.ones((8, 1), np.float32))


@pytest.mark.parametrize("argv, error_type", [
    (["info", "{missing}.og"], "FileNotFoundError"),
    (["verify", "{missing}.og"], "FileNotFoundError"),
    (["run", "{missing}.og"], "FileNotFoundError"),
    (["convert", "{missing}.og", "{d}/o.onnx"], "FileNotFoundError"),
    (["convert", "{missing}.onnx", "{d}/o.og"], "ConversionError"),
    (["run", "{d}/m.og", "--input", "x={missing}.npy"], "FormatError"),
    (["train", "{missing}.og", "--data", "{d}/d.npz", "--steps", "1"], "FileNotFoundError"),
    (["train", "{d}/t.og", "--data", "{missing}.npz", "--steps", "1"], "FormatError"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_missing_files_are_reported_alike_by_every_subcommand(tmp_path, capsys, argv,
                                                              error_type):
    """One wording, the path once, no errno; exit 2 (for verify too: its exit 1 means
    the file is there and invalid). The type is the one the Python API raises."""
    _onnx_file(str(tmp_path / "m.onnx"))
    assert main(["convert", str(tmp_path / "m.onnx"), str(tmp_path / "m.og")]) == 0
    _trainable(tmp_path)
    missing = str(tmp_path / "nope")
    argv = [a.format(d=tmp_path, missing=missing) for a in argv]
    path = next(a.split("=")[-1] for a in argv if a.split("=")[-1].startswith(missing))
    capsys.readouterr()
    assert main(argv) == 2
    _, err = _one_error_line(capsys)
    prefix = "--input x: " if argv[0] == "run" and "--input" in argv else ""
    assert err == (f"onegraph {argv[0]}: {error_type}: {prefix}cannot read {path!r}: "
                   "No such file or directory")


def test_flag_errors_name_the_flags(tmp_path, capsys):
    src = str(tmp_path / "m.onnx")
    _onnx_file(src)
    assert main(["convert", src, str(tmp_path / "m.og")]) == 0
    capsys.readouterr()
    assert main(["convert", str(tmp_path / "m.og"), str(tmp_path / "b.onnx"),
                 "--opset", "999"]) == 2
    assert _one_error_line(capsys)[1].startswith(
        "onegraph convert: ConversionError: --opset must be an integer from 1 to ")
    assert not (tmp_path / "b.onnx").exists()
    assert main(["run", str(tmp_path / "m.og")]) == 2
    assert _one_error_line(capsys)[1] == ("onegraph run: OneGraphError: --input: signature "
                                          "'serving' takes inputs ['x']; missing ['x']")


def _help(capsys, *argv):
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    return " ".join(capsys.readouterr().out.split())  # argparse wraps lines


def test_help_states_defaults_and_file_names(capsys):
    import onegraph.cli

    assert "onegraph train model.og" in onegraph.cli.__doc__
    assert "exit status 1 if it is invalid" in _help(capsys)
    text = _help(capsys, "convert")
    assert "default: the model's recorded opset" in text
    text = _help(capsys, "run")
    for words in ("default: serving", "a model without signatures runs its graph's inputs",
                  "NAME is the signature's input key", "NAME_0.npy", "NAME.keys.npy",
                  "NAME.values.npy", "made '_'"):
        assert words in text, words


def test_zipmap_outputs_keep_the_declared_dtypes(tmp_path, capsys):
    """ZipMap gives Python floats; the files hold what the model declares (int64 keys,
    float values), not numpy's float64 guess."""
    from onnx import TensorProto as TP

    x = helper.make_tensor_value_info("x", TP.FLOAT, [None, 2])
    label = helper.make_tensor_value_info("label", TP.INT64, [None])
    probs = helper.make_value_info("probs", helper.make_sequence_type_proto(
        helper.make_map_type_proto(TP.INT64, helper.make_tensor_type_proto(TP.FLOAT, []))))
    nodes = [helper.make_node("LinearClassifier", ["x"], ["label", "p"], domain="ai.onnx.ml",
                              classlabels_ints=[0, 1, 2], coefficients=[1., 0., 0., 1., -1., -1.],
                              intercepts=[0., 0., 0.], post_transform="SOFTMAX"),
             helper.make_node("ZipMap", ["p"], ["probs"], domain="ai.onnx.ml",
                              classlabels_int64s=[0, 1, 2])]
    onnx.save(helper.make_model(helper.make_graph(nodes, "clf", [x], [label, probs]),
                                opset_imports=[helper.make_opsetid("", 17),
                                               helper.make_opsetid("ai.onnx.ml", 3)]),
              tmp_path / "clf.onnx")
    assert main(["convert", str(tmp_path / "clf.onnx"), str(tmp_path / "clf.og")]) == 0
    np.save(tmp_path / "x.npy", np.array([[1, 2], [3, -1]], np.float32))
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "clf.og"), "--input", f"x={tmp_path / 'x.npy'}",
                 "--output-dir", str(out)]) == 0
    for i in (0, 1):
        keys, values = np.load(out / f"probs_{i}.keys.npy"), np.load(out / f"probs_{i}.values.npy")
        assert keys.dtype == np.int64 and keys.tolist() == [0, 1, 2]
        assert values.dtype == np.float32 and abs(values.sum() - 1) < 1e-6
    assert "probs[0] values: float32[3]" in capsys.readouterr().out


def test_outputs_whose_files_would_meet_get_distinct_names(tmp_path):
    """A sequence output x writes x_0.npy, x_1.npy; an output named x_0 then takes
    x_0_2.npy (it raised a ValueError traceback; before that it overwrote x_0.npy)."""
    import onegraph as og
    from onegraph.convert import from_onnx

    graph = helper.make_graph(
        [helper.make_node("SequenceConstruct", ["a", "a"], ["x"]),
         helper.make_node("Neg", ["a"], ["x_0"])], "main",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])],
        [helper.make_value_info("x", helper.make_sequence_type_proto(
            helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))),
         helper.make_tensor_value_info("x_0", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    og.save(from_onnx(model), tmp_path / "m.og")
    np.save(tmp_path / "a.npy", np.array([1, 2], np.float32))
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "m.og"), "--input", f"a={tmp_path / 'a.npy'}",
                 "--output-dir", str(out)]) == 0
    assert sorted(os.listdir(out)) == ["x_0.npy", "x_0_2.npy", "x_1.npy"]
    np.testing.assert_array_equal(np.load(out / "x_0.npy"), [1, 2])
    np.testing.assert_array_equal(np.load(out / "x_0_2.npy"), [-1, -2])


def _partly_supported_onnx(path):
    """Relu, then an op of an unknown domain and an op ONNX does not define."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    nodes = [helper.make_node("Relu", ["x"], ["a"]),
             helper.make_node("FooBar", ["a"], ["b"], domain="com.example"),
             helper.make_node("Frob", ["b"], ["y"])]
    m = helper.make_model(helper.make_graph(nodes, "g", [x], [y]), producer_name="maker",
                          producer_version="2.1",
                          opset_imports=[helper.make_opsetid("", 18),
                                         helper.make_opsetid("com.example", 1)])
    onnx.save(m, path)


def test_info_of_an_onnx_file_lists_the_ops_without_kernels(tmp_path, capsys):
    """What converting would give, without refusing the unknown ops or writing a file."""
    src = tmp_path / "m.onnx"
    _partly_supported_onnx(src)
    assert main(["info", str(src)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"model: {src}"
    assert lines[1] == "producer: maker 2.1   format: ONNX   opsets: ai.onnx=18, com.example=1"
    ops = lines[lines.index("ops:") + 1:lines.index("op coverage: 1/3 op types have kernels")]
    assert [line.split(maxsplit=2) for line in ops] == [
        ["1", "Frob", "(no kernel)"], ["1", "Relu"],
        ["1", "com.example::FooBar", "(no kernel)"]]
    assert main(["info", "--json", str(src)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["format"] == "onnx" and d["schema_version"] is None
    assert d["ops_without_kernel"] == ["Frob", "com.example::FooBar"]
    assert d["op_histogram"] == {"Frob": 1, "Relu": 1, "com.example::FooBar": 1}
    assert sorted(os.listdir(tmp_path)) == ["m.onnx"]


def test_info_of_an_onnx_file_matches_its_conversion(tmp_path, capsys):
    src = str(tmp_path / "m.onnx")
    _onnx_file(src)
    assert main(["info", "--json", src]) == 0
    of_onnx = json.loads(capsys.readouterr().out)
    assert main(["convert", src, str(tmp_path / "m.og")]) == 0
    capsys.readouterr()
    assert main(["info", "--json", str(tmp_path / "m.og")]) == 0
    of_og = json.loads(capsys.readouterr().out)
    for key in ("inputs", "outputs", "signatures", "op_histogram", "ops_without_kernel",
                "parameters", "nodes", "opset_imports"):
        assert of_onnx[key] == of_og[key], key
    assert of_onnx["ops_without_kernel"] == []


def test_info_of_a_broken_onnx_file_is_a_conversion_error(tmp_path, capsys):
    src = tmp_path / "m.onnx"
    src.write_bytes(b"\x0a\xff\xff garbage")
    assert main(["info", str(src)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("onegraph info: ConversionError: ")
    assert "not a valid ONNX model" in err[0] and "convert it first" not in err[0]

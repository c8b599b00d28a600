"""What a new user of `onegraph convert` / `onegraph run` gets wrong, checked from the
outside: an output that is (a link to) an input, a destination that cannot be written,
Ctrl-C at any moment, and output that stays one line per value."""

import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onegraph.cli as cli
from onegraph.cli import main

REPO_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def files(tmp_path):
    """small.onnx (Gemm + Softmax, a symbolic batch), its .og, and an input data.npy."""
    rng = np.random.default_rng(1)
    x = helper.make_tensor_value_info("data", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["batch", 3])
    inits = [numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b")]
    nodes = [helper.make_node("Gemm", ["data", "w", "b"], ["z"]),
             helper.make_node("Softmax", ["z"], ["prob"], axis=1)]
    graph = helper.make_graph(nodes, "g", [x], [y], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              tmp_path / "small.onnx")
    np.save(tmp_path / "data.npy", rng.standard_normal((5, 4)).astype(np.float32))
    assert main(["convert", str(tmp_path / "small.onnx"), str(tmp_path / "small.og")]) == 0
    return tmp_path


def _cli(*argv, cwd=None):
    """Run the console command in a process of its own, as a shell user does."""
    env = dict(os.environ, PYTHONPATH=REPO_PARENT + os.pathsep + os.environ.get("PYTHONPATH",
                                                                                ""))
    return subprocess.run([sys.executable, "-m", "onegraph.cli", *map(str, argv)], env=env,
                          cwd=cwd, capture_output=True, text=True, timeout=120)


def _refused(r, *words):
    """Exit status 2, nothing on stdout, one line on stderr holding `words`."""
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and not r.stdout, (r.stdout, r.stderr)
    for w in words:
        assert w in lines[0], (w, lines[0])


@pytest.mark.parametrize("source, link", [("small.onnx", "out.og"), ("small.og", "out.onnx")])
def test_convert_refuses_an_output_that_links_to_its_input(files, source, link):
    """`onegraph convert` writes through a symbolic link (the link stays, its target is
    replaced); a link to the file being converted would replace the input with the
    output, so it is refused before any work, as `run` refuses its own."""
    before = (files / source).read_bytes()
    os.symlink(source, files / link)
    _refused(_cli("convert", source, link, cwd=files), link, "writing there would destroy")
    assert (files / source).read_bytes() == before
    assert sorted(os.listdir(files)) == sorted(["small.onnx", "small.og", "data.npy", link])


@pytest.mark.parametrize("source, target", [("small.onnx", "nowhere/m.og"),
                                            ("small.og", "nowhere/m.onnx"),
                                            ("small.onnx", "data.npy/m.og"),
                                            ("small.og", "folder.onnx")])
def test_convert_checks_where_it_writes_before_converting(files, monkeypatch, capsys,
                                                          source, target):
    """A destination that cannot be written fails before the conversion (minutes for a
    large model), not after it; the words are those of the failed write."""
    import onegraph.convert.onnx_export as onnx_export
    import onegraph.convert.onnx_import as onnx_import

    (files / "folder.onnx").mkdir()
    called = []

    def spy(*args, **kwargs):
        called.append(args)
        raise AssertionError("converted before checking the destination")

    monkeypatch.setattr(onnx_import, "from_onnx", spy)
    monkeypatch.setattr(onnx_export, "to_onnx", spy)
    code = main(["convert", str(files / source), str(files / target)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("onegraph convert: ConversionError: cannot write '"), err[0]
    assert target in err[0] and not called


def test_run_refuses_an_output_file_that_is_an_input(files):
    """README: every place `run` writes is checked before the model runs, and one that
    is a file the command reads (an --input) is refused: the output `prob` would go to
    DIR/prob.npy, which is the --input file here."""
    out = files / "out"
    out.mkdir()
    np.save(out / "prob.npy", np.load(files / "data.npy"))
    before = (out / "prob.npy").read_bytes()
    _refused(_cli("run", "small.og", "--input", "data=out/prob.npy", "--output-dir", "out",
                  cwd=files), "--output-dir", "prob.npy", "--input file of 'data'")
    assert (out / "prob.npy").read_bytes() == before
    assert os.listdir(out) == ["prob.npy"]


def test_run_refuses_a_sequence_element_file_that_is_an_input(tmp_path):
    """A sequence's files (NAME_0.npy, ...) are known only after the run: the one that
    is the --input file is refused then, and no output is written."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    s = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node("SplitToSequence", ["x"], ["s"])], "g",
                              [x], [s])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              tmp_path / "seq.onnx")
    assert _cli("convert", "seq.onnx", "seq.og", cwd=tmp_path).returncode == 0
    (tmp_path / "out").mkdir()
    np.save(tmp_path / "out" / "s_2.npy", np.arange(4, dtype=np.float32))
    before = (tmp_path / "out" / "s_2.npy").read_bytes()
    _refused(_cli("run", "seq.og", "--input", "x=out/s_2.npy", "--output-dir", "out",
                  cwd=tmp_path), "--output-dir", "s_2.npy", "--input file of 'x'")
    assert (tmp_path / "out" / "s_2.npy").read_bytes() == before
    assert os.listdir(tmp_path / "out") == ["s_2.npy"]


def test_ctrl_c_while_the_command_starts_is_one_line(files, capsys, monkeypatch):
    """Ctrl-C while the subcommands are being loaded (about a second of imports) ends
    like Ctrl-C during the work: one line and exit status 130, no traceback."""
    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    code = main(["convert", str(files / "small.onnx"), str(files / "x.og")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 130 and err == ["onegraph: interrupted"], err
    assert not (files / "x.og").exists()


def test_run_prints_one_line_per_output(files):
    """Without --output-dir each output is summarized on one line (numpy's printer
    wraps at 75 columns), its values those onnxruntime computes."""
    data = np.load(files / "data.npy")
    (want,) = ort.InferenceSession(str(files / "small.onnx")).run(None, {"data": data})
    r = _cli("run", "small.og", "--input", "data=data.npy", cwd=files)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("prob: float32[5, 3] "), r.stdout
    shown = lines[0].split("values=[")[1].split("]")[0]
    got = np.array([float(v) for v in shown.split(",")], np.float32)
    np.testing.assert_allclose(got, want.reshape(-1)[:8], rtol=1e-4)


def test_run_prints_integers_exactly(tmp_path):
    """An int64 output (ids, counts) is summarized with its exact min and max, not
    rounded to six digits."""
    x = helper.make_tensor_value_info("x", TensorProto.INT64, [3])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, [3])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              tmp_path / "id.onnx")
    assert _cli("convert", "id.onnx", "id.og", cwd=tmp_path).returncode == 0
    np.save(tmp_path / "x.npy", np.array([3, 2**40 + 1, -7], np.int64))
    r = _cli("run", "id.og", "--input", "x=x.npy", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("y: int64[3] min=-7 max=1099511627777 "), r.stdout


def test_run_trace_next_to_the_outputs(files):
    """--trace into the --output-dir the run creates is written there; a --trace that
    is an output's file (out/prob.npy) is refused before the run, not written over the
    output."""
    r = _cli("run", "small.og", "--input", "data=data.npy", "--output-dir", "new/out",
             "--trace", "new/out/trace.json", cwd=files)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(files / "new" / "out")) == ["prob.npy", "trace.json"]
    data = np.load(files / "data.npy")
    (want,) = ort.InferenceSession(str(files / "small.onnx")).run(None, {"data": data})
    np.testing.assert_allclose(np.load(files / "new" / "out" / "prob.npy"), want,
                               rtol=1e-5, atol=1e-7)
    import json
    assert json.loads((files / "new" / "out" / "trace.json").read_text())["traceEvents"]

    (files / "out").mkdir()
    _refused(_cli("run", "small.og", "--input", "data=data.npy", "--output-dir", "out",
                  "--trace", "out/prob.npy", cwd=files), "--trace", "output 'prob'")
    assert os.listdir(files / "out") == []


def _save_onnx(path, nodes, inputs, outputs, opset=21):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)


@pytest.mark.slow  # 20 s of CLI processes; `make test-slow` runs it
def test_outputs_numpy_lacks_are_written_as_numbers_and_read_back(tmp_path):
    """bfloat16, float8 and int4 outputs: np.save writes such arrays as raw bytes
    ('|V2') or with a descriptor np.load refuses (float8_e5m2's '<f1'); run writes them
    widened, exactly (float32, int8), prints their values, and takes those files (and
    the raw bytes np.save writes) back as inputs of that type."""
    import ml_dtypes

    T = TensorProto
    x = helper.make_tensor_value_info("x", T.FLOAT, [4])
    types = {"bf": (T.BFLOAT16, ml_dtypes.bfloat16), "f8": (T.FLOAT8E5M2, ml_dtypes.float8_e5m2),
             "i4": (T.INT4, ml_dtypes.int4)}
    _save_onnx(tmp_path / "casts.onnx", [helper.make_node("Cast", ["x"], [n], to=t)
                                         for n, (t, _) in types.items()],
               [x], [helper.make_tensor_value_info(n, t, [4]) for n, (t, _) in types.items()])
    xb = helper.make_tensor_value_info("x", T.BFLOAT16, [4])
    _save_onnx(tmp_path / "bfin.onnx", [helper.make_node("Cast", ["x"], ["y"], to=T.FLOAT)],
               [xb], [helper.make_tensor_value_info("y", T.FLOAT, [4])])
    for m in ("casts", "bfin"):
        assert _cli("convert", f"{m}.onnx", f"{m}.og", cwd=tmp_path).returncode == 0
    values = np.array([1.5, -2.0, 3.0, 7.0], np.float32)
    np.save(tmp_path / "x.npy", values)

    r = _cli("run", "casts.og", "--input", "x=x.npy", "--output-dir", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    for name, (_, mltype) in types.items():
        got = np.load(tmp_path / "out" / f"{name}.npy")
        want = values.astype(mltype)
        assert got.dtype == (np.int8 if name == "i4" else np.float32), got.dtype
        np.testing.assert_array_equal(got, want.astype(got.dtype))
    r = _cli("run", "casts.og", "--input", "x=x.npy", cwd=tmp_path)
    assert "bf: bfloat16[4] min=-2 max=7 " in r.stdout, r.stdout

    np.save(tmp_path / "raw.npy", values.astype(ml_dtypes.bfloat16))  # '|V2'
    for fed in ("out/bf.npy", "raw.npy"):
        r = _cli("run", "bfin.og", "--input", f"x={fed}", "--output-dir", "back",
                 cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        np.testing.assert_array_equal(np.load(tmp_path / "back" / "y.npy"), values)
    # other numbers are cast as the Session casts every feed (as TF1 does): rounded
    tenth = np.float32([0.1, 1, 2, 3])
    np.save(tmp_path / "tenth.npy", tenth)
    r = _cli("run", "bfin.og", "--input", "x=tenth.npy", "--output-dir", "cast",
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "cast" / "y.npy"),
                                  tenth.astype(ml_dtypes.bfloat16).astype(np.float32))
    np.save(tmp_path / "big.npy", np.float64([1e39, 0, 0, 0]))
    _refused(_cli("run", "bfin.og", "--input", "x=big.npy", cwd=tmp_path),
             "feed for 'x'", "overflows the tensor's bfloat16")


@pytest.mark.parametrize("argv, command", [
    (["run", "small.og", "data=data.npy"], "run"),
    (["info", "small.onnx", "small.og"], "info"),
    (["convert", "small.onnx", "a.og", "b.og"], "convert")])
def test_unrecognized_arguments_name_the_subcommand(files, argv, command):
    """README: a malformed command line is `onegraph <command>: error: ...` pointing to
    that command's --help, as for a missing argument; a stray argument (a forgotten
    --input) was reported as `onegraph: error:`, pointing to the top-level help."""
    r = _cli(*argv, cwd=files)
    assert r.returncode == 2 and not r.stdout, r
    assert r.stderr.strip() == (f"onegraph {command}: error: unrecognized arguments: "
                                f"{argv[-1]} (see 'onegraph {command} --help')"), r.stderr
    assert not (files / "a.og").exists()


def test_info_lists_the_inputs_a_run_needs_apart_from_initializers(tmp_path):
    """An ONNX model that lists its initializers as graph inputs (IR 3, caffe2 and old
    exporters; the onnx wheel's light models): `info` names as inputs what
    onnxruntime's get_inputs() names, and counts the overridable ones after them."""
    x = helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])
    inits = [numpy_helper.from_array(np.full(3, k, np.float32), f"b{k}") for k in range(3)]
    listed = [helper.make_tensor_value_info(t.name, TensorProto.FLOAT, [3]) for t in inits]
    nodes = [helper.make_node("Add", ["data", "b0"], ["s0"]),
             helper.make_node("Add", ["s0", "b1"], ["s1"]),
             helper.make_node("Add", ["s1", "b2"], ["y"])]
    graph = helper.make_graph(nodes, "g", listed[:2] + [x] + listed[2:], [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 3
    onnx.save(model, tmp_path / "ir3.onnx")
    want = [i.name for i in ort.InferenceSession(str(tmp_path / "ir3.onnx")).get_inputs()]
    r = _cli("info", "ir3.onnx", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    line = next(s for s in r.stdout.splitlines() if s.startswith("inputs: "))
    import re
    assert re.findall(r"(?:^inputs|\]), ?([^,:]+?): ", line.replace("inputs:", "inputs,")) \
        == want, line
    assert "inputs with a default value (initializers, fed only to override them): 3 " \
           "(b0, b1, b2)" in r.stdout


def test_an_npz_given_as_input_is_named_as_such(files):
    """An .npz archive (numpy.savez, how test data often comes) given to --input is
    refused naming what it is and the arrays it holds, not as a file starting b'PK'."""
    np.savez(files / "d.npz", data=np.load(files / "data.npy"), extra=np.zeros(2))
    _refused(_cli("run", "small.og", "--input", "data=d.npz", cwd=files),
             "FormatError: --input data: d.npz is not a .npy file but an .npz archive "
             "(of 'data', 'extra')",
             "numpy.save")

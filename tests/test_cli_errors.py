"""Every bad input to the `onegraph` CLI ends in one line naming the error type, a
non-zero exit status, and no traceback; nothing is left half-written."""

import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onegraph as og
from onegraph.cli import main

from .trainable import save_linear_trainable

REPO_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    b = numpy_helper.from_array(np.full((3,), 0.5, np.float32), "b")
    nodes = [helper.make_node("Add", ["x", "b"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y], [b]),
                                opset_imports=[helper.make_opsetid("", 17)]), d / "m.onnx")
    assert main(["convert", str(d / "m.onnx"), str(d / "m.og")]) == 0

    save_linear_trainable(d / "t.og")

    (d / "empty.og").write_bytes(b"")
    (d / "empty.onnx").write_bytes(b"")
    rng = np.random.default_rng(0)
    (d / "random.og").write_bytes(rng.bytes(4096))
    (d / "random.onnx").write_bytes(rng.bytes(4096))
    (d / "random.npy").write_bytes(rng.bytes(300))
    (d / "text.onnx").write_text("this is not a protobuf\n" * 20)
    (d / "dir.og").mkdir()
    (d / "dir.onnx").mkdir()
    np.save(d / "x.npy", np.ones((2, 3), np.float32))
    np.save(d / "x_complex.npy", np.ones((2, 3), np.complex64))
    np.save(d / "x_shape.npy", np.ones((5, 7), np.float32))
    np.save(d / "x_obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    np.savez(d / "d.npz", x=np.ones((8, 3), np.float32), y=np.ones((8, 1), np.float32))
    np.savez(d / "d_missing.npz", x=np.ones((8, 3), np.float32))
    np.savez(d / "d_lengths.npz", x=np.ones((8, 3), np.float32), y=np.ones((5, 1), np.float32))
    np.savez(d / "d_empty.npz", x=np.ones((0, 3), np.float32), y=np.ones((0, 1), np.float32))
    np.savez(d / "d_scalar.npz", x=np.float32(1), y=np.float32(1))
    np.savez(d / "d_obj.npz", x=np.array([{}] * 8, dtype=object),
             y=np.ones((8, 1), np.float32), allow_pickle=True)
    np.savez(d / "d_shape.npz", x=np.ones((8, 4), np.float32), y=np.ones((8, 1), np.float32))
    return d


def _fails(capsys, argv, error_type, *words):
    """Run the CLI in-process: non-zero exit, one stderr line naming `error_type`."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code != 0, (argv, out, err)
    assert len(lines) == 1, err
    assert lines[0].startswith(f"onegraph {argv[0]}: {error_type}: "), lines[0]
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


@pytest.mark.parametrize("command", ["info", "run", "convert"])
def test_missing_directory_empty_random_model(files, capsys, command, tmp_path):
    extra = [tmp_path / "out.onnx"] if command == "convert" else []
    _fails(capsys, [command, files / "nope.og", *extra], "FileNotFoundError", "nope.og")
    _fails(capsys, [command, files / "dir.og", *extra], "IsADirectoryError", "dir.og")
    _fails(capsys, [command, files / "empty.og", *extra], "FormatError", "empty")
    _fails(capsys, [command, files / "random.og", *extra], "FormatError", "not a .og model")
    assert not (tmp_path / "out.onnx").exists()


def test_run_of_an_onnx_file_is_a_format_error(files, capsys):
    """(`onegraph info` describes an ONNX file: tests/convert/test_cli.py.)"""
    _fails(capsys, ["run", files / "m.onnx"], "FormatError", "m.onnx", "not a .og model")


@pytest.mark.parametrize("name, error", [("empty.og", "file is empty"),
                                         ("random.og", "not a .og model")])
def test_verify_reports_invalid(files, capsys, name, error):
    assert main(["verify", str(files / name)]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith(f"{files / name}: INVALID: ") and error in out[0]


@pytest.mark.parametrize("name, error", [("nope.og", "FileNotFoundError: cannot read '{}': "
                                                     "No such file or directory"),
                                         ("dir.og", "IsADirectoryError: cannot read '{}': "
                                                    "Is a directory")])
def test_verify_of_a_file_it_cannot_open_is_a_usage_error(files, capsys, name, error):
    """exit 1 says the file is there and invalid; one that cannot be opened is exit 2,
    worded as every subcommand words it"""
    assert main(["verify", str(files / name)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "onegraph verify: " + error.format(files / name)


def test_verify_accepts_a_good_file(files, capsys):
    assert main(["verify", str(files / "m.og")]) == 0
    assert "OK" in capsys.readouterr().out


@pytest.mark.parametrize("name, words", [
    ("nope.onnx", ["nope.onnx", "No such file"]),
    ("dir.onnx", ["dir.onnx", "Is a directory"]),
    ("empty.onnx", ["empty.onnx", "not a valid ONNX model"]),
    ("random.onnx", ["random.onnx", "not a valid ONNX model"]),
    ("text.onnx", ["text.onnx", "not a valid ONNX model"])])
def test_convert_bad_onnx(files, capsys, tmp_path, name, words):
    _fails(capsys, ["convert", files / name, tmp_path / "out.og"], "ConversionError", *words)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("src, dst", [("m.onnx", "out.txt"), ("m.og", "out.og"),
                                      ("m.onnx", "out.onnx"), ("m", "out.og")])
def test_convert_wrong_extension_pair(files, capsys, tmp_path, src, dst):
    _fails(capsys, ["convert", files / src, tmp_path / dst], "ConversionError",
           "cannot tell the direction")
    assert os.listdir(tmp_path) == []


def test_convert_opset_on_import_is_refused(files, capsys, tmp_path):
    _fails(capsys, ["convert", files / "m.onnx", tmp_path / "o.og", "--opset", "18"],
           "ConversionError", "--opset")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("src, dst", [("m.onnx", "/proc/x.og"), ("m.og", "/proc/x.onnx"),
                                      ("m.onnx", "/nonexistent-dir/x.og"),
                                      ("m.onnx", "dir.og")])
def test_convert_unwritable_output(files, capsys, src, dst):
    before = sorted(os.listdir(files))
    dst = dst if dst.startswith("/") else files / dst
    # both directions in og.save's and to_onnx's words: "cannot write 'PATH': REASON"
    _fails(capsys, ["convert", files / src, dst], "ConversionError",
           f"cannot write {str(dst)!r}: ")
    assert sorted(os.listdir(files)) == before  # no temporary file left behind


@pytest.mark.parametrize("arg, error, words", [
    ("x={d}/x_shape.npy", "ShapeError", ["'x'", "[5, 7]", "[2, 3]"]),
    ("x={d}/x_complex.npy", "ShapeError", ["'x'", "complex64", "float32"]),
    ("x={d}/x_obj.npy", "FormatError", ["--input x", "x_obj.npy", "pickle (refused)"]),
    ("x={d}/random.npy", "FormatError", ["random.npy", "not a .npy file"]),
    ("x={d}/empty.og", "FormatError", ["empty.og", "not a .npy file"]),
    ("x={d}/d.npz", "FormatError", ["d.npz", "not a .npy file"]),
    ("x={d}/nope.npy", "FormatError", ["nope.npy", "No such file"]),
    ("x={d}/dir.og", "FormatError", ["dir.og", "Is a directory"]),
    ("zz={d}/x.npy", "OneGraphError", ["missing ['x']", "unknown ['zz']"]),
    ("x", "OneGraphError", ["expected NAME=file.npy"]),
    ("={d}/x.npy", "OneGraphError", ["expected NAME=file.npy"])])
def test_run_bad_inputs(files, capsys, arg, error, words):
    _fails(capsys, ["run", files / "m.og", "--input", arg.format(d=files)], error, *words)


def test_run_without_inputs_duplicate_input_and_unknown_signature(files, capsys):
    _fails(capsys, ["run", files / "m.og"], "OneGraphError", "missing ['x']")
    x = f"x={files / 'x.npy'}"
    _fails(capsys, ["run", files / "m.og", "--input", x, "--input", x], "OneGraphError",
           "more than once")
    _fails(capsys, ["run", files / "m.og", "--input", x, "--signature", "nope"],
           "OneGraphError", "'nope'", "serving")


@pytest.mark.parametrize("out", ["x.npy", "/proc/out"])
def test_run_unusable_output_dir(files, capsys, out):
    out = out if out.startswith("/") else files / out
    _fails(capsys, ["run", files / "m.og", "--input", f"x={files / 'x.npy'}",
                    "--output-dir", out], "OneGraphError", "--output-dir", str(out))


def test_run_good_input_still_works(files, capsys, tmp_path):
    assert main(["run", str(files / "m.og"), "--input", f"x={files / 'x.npy'}",
                 "--output-dir", str(tmp_path)]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), np.full((2, 3), 1.5, np.float32))


def _train(d, *extra, data="d.npz"):
    return ["train", d / "t.og", "--data", d / data, "--steps", "3", "--quiet", *extra]


@pytest.mark.parametrize("flag, value", [("--steps", "0"), ("--steps", "-2"),
                                         ("--batch-size", "0"), ("--batch-size", "-1"),
                                         ("--checkpoint-every", "0")])
def test_train_non_positive_counts(files, capsys, tmp_path, flag, value):
    argv = _train(files, "--output", tmp_path / "o.og", "--checkpoint-dir", tmp_path / "ck")
    i = argv.index(flag) if flag in argv else len(argv)
    argv[i:i + 2] = [flag, value]
    _fails(capsys, argv, "OneGraphError", flag, "positive", value)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("data, error, words", [
    ("nope.npz", "FormatError", ["nope.npz", "No such file"]),
    ("dir.og", "FormatError", ["dir.og", "Is a directory"]),
    ("empty.og", "FormatError", ["empty.og", "not an .npz"]),
    ("random.npy", "FormatError", ["random.npy", "not an .npz"]),
    ("x.npy", "FormatError", ["x.npy", "not an .npz"]),
    ("d_obj.npz", "FormatError", ["d_obj.npz", "pickle (refused)"]),
    ("d_missing.npz", "OneGraphError", ["d_missing.npz", "['y']"]),
    ("d_lengths.npz", "OneGraphError", ["d_lengths.npz", "'x': 8", "'y': 5"]),
    ("d_empty.npz", "OneGraphError", ["d_empty.npz", "no rows"]),
    ("d_scalar.npz", "OneGraphError", ["d_scalar.npz", "scalars"])])
def test_train_bad_data(files, capsys, tmp_path, data, error, words):
    _fails(capsys, _train(files, "--output", tmp_path / "o.og", data=data), error, *words)
    assert os.listdir(tmp_path) == []


def test_train_data_of_the_wrong_shape(files, capsys, tmp_path):
    _fails(capsys, _train(files, "--output", tmp_path / "o.og", data="d_shape.npz"),
           "ShapeError", "'x'", "[-1, 3]")
    assert os.listdir(tmp_path) == []


def test_train_model_without_train_signature(files, capsys):
    _fails(capsys, ["train", files / "m.og", "--data", files / "d.npz", "--steps", "3"],
           "OneGraphError", "no 'train' signature")


@pytest.mark.parametrize("flag, path, words", [
    ("--output", "/proc/x.og", ["--output /proc/x.og", "cannot write"]),
    ("--output", "dir.og", ["dir.og", "is a directory"]),
    ("--checkpoint-dir", "/proc/ck", ["--checkpoint-dir /proc/ck"]),
    ("--checkpoint-dir", "x.npy", ["x.npy", "cannot create"])])
def test_train_unwritable_destinations_fail_before_training(files, capsys, flag, path, words):
    path = path if path.startswith("/") else files / path
    before = sorted(os.listdir(files))
    _fails(capsys, _train(files, flag, path), "OneGraphError", *words)
    assert sorted(os.listdir(files)) == before


def test_train_good_run_writes_the_model(files, capsys, tmp_path):
    assert main([str(a) for a in _train(files, "--output", tmp_path / "o.og")]) == 0
    w = og.load(str(tmp_path / "o.og")).graph
    assert any(t.name == "w" and t.data is not None and np.any(t.data != 0) for t in w.tensors)


def test_console_entry_point_has_no_traceback(files):
    """The real process: the exit status and stderr a shell user sees."""
    env = dict(os.environ, PYTHONPATH=REPO_PARENT + os.pathsep + os.environ.get("PYTHONPATH",
                                                                                ""))
    for argv in (["info", files / "dir.og"], ["run", files / "m.og", "--input", "x"],
                 _train(files, "--batch-size", "-1"), ["info"], ["frobnicate"]):
        r = subprocess.run([sys.executable, "-m", "onegraph.cli", *map(str, argv)], env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 2, (argv, r.stderr)
        assert "Traceback" not in r.stderr and r.stderr.strip(), (argv, r.stderr)
        assert r.stderr.strip().splitlines()[-1].startswith(("onegraph", "usage:")), r.stderr


def test_run_reads_an_input_from_a_pipe(files):
    """--input x=/dev/stdin (or a shell's <(...)): numpy's reader seeks, which a pipe
    cannot; the rest of the stream is read into memory first."""
    import io

    env = dict(os.environ, PYTHONPATH=REPO_PARENT + os.pathsep + os.environ.get("PYTHONPATH",
                                                                                ""))
    buf = io.BytesIO()
    np.save(buf, np.full((2, 3), 2.0, np.float32))
    r = subprocess.run([sys.executable, "-m", "onegraph.cli", "run", str(files / "m.og"),
                        "--input", "x=/dev/stdin"], env=env, input=buf.getvalue(),
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert b"y: float32[2, 3] min=2.5 max=2.5" in r.stdout, r.stdout

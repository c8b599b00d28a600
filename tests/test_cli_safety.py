"""The CLI does not destroy what it reads, run on corrupted weights, or leave a file
half-written: outputs that are inputs, checksums, the loss curve, symbolic links and
streams as outputs, string feeds, Ctrl-C, and names printed from files."""

import json
import os
import shutil
import threading

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onegraph as og
import onegraph.cli as cli
from onegraph.cli import main
from onegraph.format.atomic import atomic_open

from .trainable import save_linear_trainable

BIAS = np.array([0.5, 0.25, 0.125], np.float32)


@pytest.fixture
def files(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in "nya"]
    nodes = [helper.make_node("Add", ["x", "b"], ["n"]), helper.make_node("Relu", ["n"], ["y"]),
             helper.make_node("Neg", ["n"], ["a"])]
    graph = helper.make_graph(nodes, "g", [x], outs, [numpy_helper.from_array(BIAS, "b")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              tmp_path / "m.onnx")
    assert main(["convert", str(tmp_path / "m.onnx"), str(tmp_path / "m.og")]) == 0
    save_linear_trainable(tmp_path / "t.og")
    np.save(tmp_path / "x.npy", np.ones((2, 3), np.float32))
    np.savez(tmp_path / "d.npz", x=np.ones((8, 3), np.float32), y=np.ones((8, 1), np.float32))
    return tmp_path


def _one_line_error(capsys, argv, *words, code=2):
    got = main([str(a) for a in argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert got == code and len(err) == 1, err
    for w in words:
        assert w in err[0], (w, err[0])
    return err[0]


def test_an_output_that_is_an_input_is_refused_before_any_work(files, capsys):
    model, data = (files / "m.og").read_bytes(), (files / "d.npz").read_bytes()
    _one_line_error(capsys, ["run", files / "m.og", "--input", f"x={files / 'x.npy'}",
                             "--trace", files / "m.og"], "--trace", "the model being run")
    _one_line_error(capsys, ["run", files / "m.og", "--input", f"x={files / 'x.npy'}",
                             "--trace", files / "x.npy"], "the --input file of 'x'")
    with open(files / "d.og", "wb") as f:  # an archive named like a model
        f.write(data)
    _one_line_error(capsys, ["train", files / "t.og", "--data", files / "d.og", "--steps",
                             "2", "--quiet", "--output", files / "d.og"], "--data file")
    assert (files / "d.og").read_bytes() == data
    (files / "d.png").write_bytes(data)  # a plot name the data file happens to have
    _one_line_error(capsys, ["train", files / "t.og", "--data", files / "d.png", "--steps",
                             "2", "--quiet", "--plot", files / "d.png"],
                    "--plot", "is the --data file")
    assert (files / "d.png").read_bytes() == data
    assert (files / "m.og").read_bytes() == model and (files / "d.npz").read_bytes() == data
    np.testing.assert_array_equal(np.load(files / "x.npy"), np.ones((2, 3), np.float32))


def test_a_model_whose_weights_fail_their_checksum_is_not_used(files, capsys):
    raw = bytearray((files / "m.og").read_bytes())
    at = raw.find(BIAS.tobytes())
    assert at > 0
    raw[at + 1] ^= 0x40
    (files / "bad.og").write_bytes(bytes(raw))
    for argv in (["run", files / "bad.og", "--input", f"x={files / 'x.npy'}"],
                 ["convert", files / "bad.og", files / "bad.onnx"]):
        _one_line_error(capsys, argv, "DataLossError", "CRC-32")
    assert not (files / "bad.onnx").exists()


def test_loss_curve_of_an_unknown_format_is_refused_before_training(files, capsys):
    pytest.importorskip("matplotlib")
    _one_line_error(capsys, ["train", files / "t.og", "--data", files / "d.npz", "--steps",
                             "2", "--quiet", "--output", files / "o.og", "--plot",
                             files / "loss.txt"], "--plot", "must end in one of", ".png")
    assert not (files / "o.og").exists()


def test_loss_curve_is_written_in_the_format_its_name_says(files, capsys):
    pytest.importorskip("matplotlib")
    assert main(["train", str(files / "t.og"), "--data", str(files / "d.npz"), "--steps",
                 "3", "--quiet", "--plot", str(files / "curve.svg")]) == 0
    assert (files / "curve.svg").read_bytes().lstrip().startswith((b"<?xml", b"<svg"))
    assert [p for p in os.listdir(files) if p.startswith(".tmp-")] == []


def test_default_loss_curve_is_named_as_such_in_errors(files, capsys):
    pytest.importorskip("matplotlib")
    (files / "o_loss.png").mkdir()  # the default curve's place is taken by a folder
    line = _one_line_error(capsys, ["train", files / "t.og", "--data", files / "d.npz",
                                    "--steps", "2", "--quiet", "--output", files / "o.og"],
                           "the loss curve (the default --plot")
    assert not line.split(": ", 2)[2].startswith("--plot")


def test_train_output_must_be_a_og_file(files, capsys):
    _one_line_error(capsys, ["train", files / "t.og", "--data", files / "d.npz", "--steps",
                             "2", "--quiet", "--output", files / "t.onnx"], ".og file")
    assert not (files / "t.onnx").exists()


def test_writing_through_a_symbolic_link_keeps_the_link(files):
    target = files / "real.og"
    shutil.copy(files / "m.og", target)
    link = files / "link.og"
    link.symlink_to(target)
    og.save(og.load(files / "t.og"), link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert og.load(target).signatures.keys() == {"train"}


def test_a_pipe_as_output_is_written_through(files):
    r, w = os.pipe()
    got = []
    reader = threading.Thread(target=lambda: got.append(os.fdopen(r, "rb").read()))
    reader.start()
    try:
        with atomic_open(f"/dev/fd/{w}", "wb") as f:
            f.write(b"trace")
    finally:
        os.close(w)
        reader.join(timeout=30)
    assert got == [b"trace"]


def test_numbers_are_not_fed_to_a_string_tensor():
    g = og.Graph()
    with g.as_default():
        s = og.placeholder(og.string, [2], name="s")
        y = og.identity(s)
    sess = og.Session(g)
    assert sess.run(y, {s: ["a", "b"]}).tolist() == ["a", "b"]
    assert sess.run(y, {s: np.array([b"a", b"b"])}).tolist() == [b"a", b"b"]
    for bad in ([1.5, 2.0], np.array([1, 2]), np.array(["a", 3], dtype=object)):
        with pytest.raises(og.ShapeError, match="not a string|does not match the tensor's "
                                                "string"):
            sess.run(y, {s: bad})
    # the very objects given: trailing NULs kept, str and bytes as they are
    got = sess.run(y, {s: [b"\x01\x00", "b\x00"]})
    assert got.tolist() == [b"\x01\x00", "b\x00"]


def test_ctrl_c_is_one_line_and_exit_130(files, capsys, monkeypatch):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_cmd_info", interrupted)
    _one_line_error(capsys, ["info", files / "m.og"], "onegraph info: interrupted", code=130)


def test_control_characters_from_names_are_escaped(files, capsys):
    line = _one_line_error(capsys, ["info", str(files / "a\nb\x1b[2J.og")], "FileNotFound")
    assert "\x1b" not in line
    assert cli.printable("op\nname\x1b[2J") == "op\\x0aname\\x1b[2J"


def test_run_lists_outputs_in_the_model_order(files, capsys):
    assert main(["run", str(files / "m.og"), "--input", f"x={files / 'x.npy'}"]) == 0
    names = [line.split()[0].rstrip(":") for line in capsys.readouterr().out.splitlines()]
    assert names == ["n", "y", "a"]


def test_dev_stdout_appended_by_the_shell_is_written_into_not_replaced(files):
    """`--trace /dev/stdout >> log`: the trace goes into the stream the shell opened
    for appending (the earlier content stays), not a rename; as with `--trace -`, the
    standard output holds the trace alone and the printed lines go to stderr."""
    import subprocess
    import sys

    log = files / "log.txt"
    log.write_text("EARLIER LINE\n")
    cmd = (f"'{sys.executable}' -m onegraph.cli run '{files / 'm.og'}' --input "
           f"x='{files / 'x.npy'}' --trace /dev/stdout >> '{log}'")
    done = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    text = log.read_text()
    assert text.startswith("EARLIER LINE\n")
    assert "traceEvents" in json.loads(text[len("EARLIER LINE\n"):])
    assert done.stderr.startswith("n: ")
    assert not log.is_symlink() and os.path.exists("/dev/stdout")


def test_train_data_through_a_pipe(files):
    import subprocess
    import sys

    cmd = (f"cat '{files / 'd.npz'}' | '{sys.executable}' -m onegraph.cli train "
           f"'{files / 't.og'}' --data /dev/stdin --steps 3 --quiet "
           f"--output '{files / 'o.og'}' --plot '{files / 'o.png'}'")
    done = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert og.load(files / "o.og").signatures.keys() == {"train"}


def test_an_onnx_file_given_for_a_og_model_gets_a_hint(files, capsys):
    """(`onegraph info` describes an ONNX file as onegraph would import it.)"""
    _one_line_error(capsys, ["run", files / "m.onnx"], "not a .og model",
                    "convert it first, `onegraph convert")


def test_an_output_file_whose_place_is_a_folder_is_refused_before_the_run(files, capsys,
                                                                          monkeypatch):
    (files / "out" / "y.npy").mkdir(parents=True)
    ran = []
    real_run = og.Session.run

    def counting_run(self, *args, **kwargs):
        ran.append(1)
        return real_run(self, *args, **kwargs)
    monkeypatch.setattr(og.Session, "run", counting_run)
    _one_line_error(capsys, ["run", files / "m.og", "--input", f"x={files / 'x.npy'}",
                             "--output-dir", files / "out"], "y.npy", "is a directory")
    assert ran == []


def test_the_onnx_hint_escapes_the_path_too(files, capsys):
    odd = files / "a\x1b[31m\nb.onnx"
    odd.write_bytes(b"garbage")
    line = _one_line_error(capsys, ["run", odd], "convert it first")
    assert "\x1b" not in line
    line = _one_line_error(capsys, ["info", odd], "not a valid ONNX model")
    assert "\x1b" not in line


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_standard_output_is_named_as_such(files):
    import subprocess
    import sys

    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "onegraph.cli", "info",
                               str(files / "m.og")], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "onegraph info: OSError: cannot write the standard output: No space left on device"]


def test_dash_reads_the_standard_input(files):
    import subprocess
    import sys

    cli_cmd = f"'{sys.executable}' -m onegraph.cli"
    done = subprocess.run(["sh", "-c", f"cat '{files / 'm.og'}' | {cli_cmd} info -"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("model: /dev/stdin"), done.stderr
    done = subprocess.run(["sh", "-c", f"cat '{files / 'x.npy'}' | {cli_cmd} run "
                                       f"'{files / 'm.og'}' --input x=- --trace -"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # the standard output is the trace alone (valid JSON, to redirect into a file);
    # the summary of the outputs goes to the standard error
    assert "traceEvents" in json.loads(done.stdout)
    assert done.stderr.startswith("n: float32[2, 3]")
    assert "trace of 1 run(s) -> /dev/stdout" in done.stderr
    done = subprocess.run(["sh", "-c", f"{cli_cmd} run - --input x=- < /dev/null"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip() == ("onegraph run: OneGraphError: model and --input x are "
                                   "both '-': only one of them can read the standard input")

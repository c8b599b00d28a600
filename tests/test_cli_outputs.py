"""`onegraph run` writes every kind of output without pickle and without losing one:
strings as unicode .npy, sequences one file per element, maps as keys/values, names
that collide after making them file-safe get distinct files; malformed .npy headers,
bad --seed/--batch-size and a folder as --trace are one-line errors; written files
keep the permissions a plain open() would give."""

import os
import stat

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from onegraph.cli import main
from onegraph.format.atomic import atomic_open


def _convert(tmp_path, name, nodes, inputs, outputs, opsets=(("", 17),)):
    model = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs),
                              opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    onnx.save(model, tmp_path / f"{name}.onnx")
    assert main(["convert", str(tmp_path / f"{name}.onnx"), str(tmp_path / f"{name}.og")]) == 0
    return tmp_path / f"{name}.og"


def _run(argv):
    return main([str(a) for a in argv])


def test_string_output_is_saved_as_unicode_and_replaces_the_old_file(tmp_path, capsys):
    x = helper.make_tensor_value_info("x", TensorProto.STRING, [2])
    y = helper.make_tensor_value_info("y", TensorProto.STRING, [2])
    model = _convert(tmp_path, "s", [helper.make_node("StringNormalizer", ["x"], ["y"],
                                                      case_change_action="UPPER")], [x], [y])
    np.save(tmp_path / "x.npy", np.array(["ab", "Cd"]))
    out = tmp_path / "out"
    out.mkdir()
    np.save(out / "y.npy", np.zeros(3))  # a previous result
    assert _run(["run", model, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", out]) == 0
    got = np.load(out / "y.npy", allow_pickle=False)
    assert got.tolist() == ["AB", "CD"]
    assert _run(["run", model, "--input", f"x={tmp_path / 'x.npy'}"]) == 0
    assert "'AB'" in capsys.readouterr().out


def test_sequence_output_is_one_file_per_element(tmp_path, capsys):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2])
    split = helper.make_tensor_value_info("split", TensorProto.INT64, [2])
    y = helper.make_tensor_sequence_value_info("y", TensorProto.FLOAT, None)
    model = _convert(tmp_path, "q", [helper.make_node("SplitToSequence", ["x", "split"],
                                                      ["y"])], [x, split], [y])
    xv = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.save(tmp_path / "x.npy", xv)
    np.save(tmp_path / "split.npy", np.array([1, 2], np.int64))
    out = tmp_path / "out"
    argv = ["run", model, "--input", f"x={tmp_path / 'x.npy'}",
            "--input", f"split={tmp_path / 'split.npy'}"]
    assert _run(argv + ["--output-dir", out]) == 0
    np.testing.assert_array_equal(np.load(out / "y_0.npy"), xv[:1])
    np.testing.assert_array_equal(np.load(out / "y_1.npy"), xv[1:])
    assert _run(argv) == 0
    assert "sequence of 2" in capsys.readouterr().out


def test_a_shorter_sequence_removes_the_earlier_runs_extra_files(tmp_path, capsys):
    """The folder holds one run's outputs: a sequence of 3 then of 2 leaves no y_2.npy
    (other files in the folder stay, y_9.npy too: it does not follow y_2.npy)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2])
    split = helper.make_tensor_value_info("split", TensorProto.INT64, [None])
    y = helper.make_tensor_sequence_value_info("y", TensorProto.FLOAT, None)
    model = _convert(tmp_path, "q", [helper.make_node("SplitToSequence", ["x", "split"],
                                                      ["y"])], [x, split], [y])
    np.save(tmp_path / "x.npy", np.arange(6, dtype=np.float32).reshape(3, 2))
    out = tmp_path / "out"
    for sizes in ([1, 1, 1], [1, 2]):
        np.save(tmp_path / "split.npy", np.array(sizes, np.int64))
        assert _run(["run", model, "--input", f"x={tmp_path / 'x.npy'}", "--input",
                     f"split={tmp_path / 'split.npy'}", "--output-dir", out]) == 0
        if len(sizes) == 3:
            np.save(out / "notes.npy", np.zeros(1))
            np.save(out / "yy_2.npy", np.zeros(1))
            np.save(out / "y_9.npy", np.zeros(1))  # not the earlier run's: it stays
    assert sorted(os.listdir(out)) == ["notes.npy", "y_0.npy", "y_1.npy", "y_9.npy",
                                       "yy_2.npy"]


def test_outputs_whose_file_names_collide_get_distinct_files(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2])
            for n in ("a/b", "a_b", "c\x00d")]
    model = _convert(tmp_path, "c", [helper.make_node("Neg", ["x"], ["a/b"]),
                                     helper.make_node("Relu", ["x"], ["a_b"]),
                                     helper.make_node("Abs", ["x"], ["c\x00d"])], [x], outs)
    xv = np.array([-1.0, 2.0], np.float32)
    np.save(tmp_path / "x.npy", xv)
    out = tmp_path / "out"
    assert _run(["run", model, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", out]) == 0
    assert sorted(os.listdir(out)) == ["a_b.npy", "a_b_2.npy", "c_d.npy"]
    np.testing.assert_array_equal(np.load(out / "a_b.npy"), -xv)
    np.testing.assert_array_equal(np.load(out / "a_b_2.npy"), np.maximum(xv, 0))
    np.testing.assert_array_equal(np.load(out / "c_d.npy"), np.abs(xv))


def _npy_with_header(path, header: bytes):
    body = header + b" " * (-(len(header) + 11) % 64) + b"\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(body).to_bytes(2, "little") + body)


@pytest.mark.parametrize("header, words", [
    (b"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, 3), }",
     ["not a plain .npy array"]),
    (b"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", ["not a plain .npy array"]),
], ids=["huge-shape", "unterminated-header"])
def test_malformed_npy_header_is_one_line(tmp_path, capsys, header, words):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    model = _convert(tmp_path, "m", [helper.make_node("Relu", ["x"], ["y"])], [x], [y])
    _npy_with_header(tmp_path / "bad.npy", header)
    assert _run(["run", model, "--input", f"x={tmp_path / 'bad.npy'}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("onegraph run: FormatError: --input x: ")
    assert all(w in err[0] for w in words)


def test_trace_that_is_a_folder_fails_before_running(tmp_path, capsys):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    model = _convert(tmp_path, "m", [helper.make_node("Relu", ["x"], ["y"])], [x], [y])
    np.save(tmp_path / "x.npy", np.ones(2, np.float32))
    (tmp_path / "tracedir").mkdir()
    out = tmp_path / "out"
    assert _run(["run", model, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", out,
                 "--trace", tmp_path / "tracedir"]) == 2
    assert "--trace" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("flag, value, words", [
    ("--seed", "-1", ["--seed", "non-negative"]),
    ("--batch-size", "100000000000", ["--batch-size", "GiB"]),
])
def test_train_refuses_bad_seed_and_huge_batches(tmp_path, capsys, flag, value, words):
    import onegraph as og

    g = og.Graph()
    with g.as_default():
        tx = og.placeholder(og.float32, [None, 3], name="x")
        w = og.Variable(np.zeros((3, 1), np.float32), name="w")
        loss = og.reduce_mean(og.square(og.matmul(tx, w)), name="loss")
        train = og.train.SGD(0.1).minimize(loss)
    og.save(g, str(tmp_path / "t.og"), signatures={
        "train": og.signature(inputs={"x": tx}, outputs={"loss": loss}, targets=[train])})
    np.savez(tmp_path / "d.npz", x=np.ones((8, 3), np.float32))
    code = _run(["train", tmp_path / "t.og", "--data", tmp_path / "d.npz", "--steps", "2",
                 "--quiet", flag, value])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and all(w in err[0] for w in words)


def test_npz_member_that_is_not_an_array(tmp_path, capsys):
    import zipfile

    with zipfile.ZipFile(tmp_path / "bad.npz", "w") as z:
        z.writestr("x.npy", b"not an array")
    from onegraph.errors import FormatError
    from onegraph.format.npy import load_npz

    with pytest.raises(FormatError, match=r"bad.npz.*'x'"):
        load_npz(tmp_path / "bad.npz")


def test_atomic_writes_keep_normal_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        new = tmp_path / "new.bin"
        with atomic_open(new) as f:
            f.write(b"1")
        assert stat.S_IMODE(os.stat(new).st_mode) == 0o644
        os.chmod(new, 0o640)
        with atomic_open(new) as f:
            f.write(b"2")
        assert stat.S_IMODE(os.stat(new).st_mode) == 0o640
        with pytest.raises(IsADirectoryError, match=str(tmp_path)):
            with atomic_open(tmp_path) as f:
                f.write(b"3")
    finally:
        os.umask(old)


def test_stale_files_spare_what_this_run_writes_and_go_through_map_elements(tmp_path):
    """A tensor output named y_1 next to a sequence y: y_1.npy is this run's, not y's
    earlier element (it stays, and y's earlier y_2.npy goes); a sequence of maps
    (ZipMap) that gets shorter loses the earlier elements' .keys/.values files."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 2])
    seq = helper.make_value_info("y", helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, None)))
    model = _convert(tmp_path, "sy", [helper.make_node("SplitToSequence", ["x"], ["y"], axis=0,
                                                       keepdims=0),
                                      helper.make_node("Identity", ["x"], ["y_1"])],
                     [x], [seq, helper.make_tensor_value_info("y_1", TensorProto.FLOAT,
                                                              [None, 2])])
    probs = helper.make_value_info("probs", helper.make_sequence_type_proto(
        helper.make_map_type_proto(TensorProto.INT64,
                                   helper.make_tensor_type_proto(TensorProto.FLOAT, []))))
    zipmap = _convert(tmp_path, "z", [helper.make_node("ZipMap", ["x"], ["probs"],
                                                       domain="ai.onnx.ml",
                                                       classlabels_int64s=[0, 1])],
                      [x], [probs], opsets=(("", 17), ("ai.onnx.ml", 3)))
    for m, out in ((model, tmp_path / "o1"), (zipmap, tmp_path / "o2")):
        for n in (3, 1):
            np.save(tmp_path / "x.npy", np.full((n, 2), 0.5, np.float32))
            assert _run(["run", m, "--input", f"x={tmp_path / 'x.npy'}",
                         "--output-dir", out]) == 0
    assert sorted(os.listdir(tmp_path / "o1"))[:2] == ["y_0.npy", "y_1.npy"]
    assert "y_2.npy" not in os.listdir(tmp_path / "o1")
    assert np.load(tmp_path / "o1" / "y_1.npy").shape == (1, 2)
    assert sorted(os.listdir(tmp_path / "o2")) == ["probs_0.keys.npy", "probs_0.values.npy"]

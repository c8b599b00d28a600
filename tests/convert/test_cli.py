"""`onegraph convert` and `onegraph run` end to end (in-process via cli.main)."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onegraph.cli import main


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


def test_convert_no_check_exports_what_the_checker_refuses(tmp_path, capsys):
    """onnx 1.23's checker refuses MeanVarianceNormalization at opset 13 (its own
    function body; the original model fails the same way): the default export says so,
    --no-check (to_onnx's check=False) writes it, and onnxruntime matches the original."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3])
    model = helper.make_model(
        helper.make_graph([helper.make_node("MeanVarianceNormalization", ["x"], ["y"])],
                          "g", [x], [y]), opset_imports=[helper.make_opsetid("", 13)])
    src = tmp_path / "mvn.onnx"
    onnx.save(model, src)
    assert main(["convert", str(src), str(tmp_path / "mvn.og")]) == 0
    back = tmp_path / "back.onnx"
    assert main(["convert", str(tmp_path / "mvn.og"), str(back)]) != 0
    assert "fails the ONNX checker" in capsys.readouterr().err
    assert not back.exists()
    assert main(["convert", str(tmp_path / "mvn.og"), str(back), "--no-check"]) == 0
    xv = np.random.default_rng(0).standard_normal((1, 2, 3, 3)).astype(np.float32)

    def run(m):
        sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        return sess.run(None, {"x": xv})[0]

    np.testing.assert_allclose(run(onnx.load(back)), run(model), rtol=1e-5, atol=1e-6)
    assert main(["convert", str(src), str(tmp_path / "again.og"), "--no-check"]) != 0
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

"""The README's examples, as written, run: each ```python block is executed in a fresh
folder (with the names it leaves to the reader, such as `image` or `xb`, defined first),
and the `onegraph` commands of its ```sh blocks run through the console entry point on
the files those examples wrote. What the examples compute is checked against numpy or
onnxruntime here, so a README that drifts from the API fails."""

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(os.path.dirname(HERE), "README.md")


def _blocks(language):
    """The texts of the README's fenced blocks of `language`, in order."""
    with open(README, encoding="utf-8") as f:
        text = f.read()
    return [m.group(2) for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S)
            if m.group(1) == language]


def _python_block(containing):
    found = [b for b in _blocks("python") if containing in b]
    assert len(found) == 1, f"one README python block with {containing!r}"
    return found[0]


def _commands(containing):
    """The `onegraph ...` commands of the sh blocks that mention `containing`: line
    continuations joined, comments and optional `[...]` parts dropped."""
    out = []
    for block in _blocks("sh"):
        if containing not in block:
            continue
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line)
            line = re.sub(r"\[[^\]]*\]", "", line).split()
            if line and line[0] == "onegraph":
                out.append(line[1:])
    assert out, f"no onegraph command in a README sh block with {containing!r}"
    return out


def _onegraph(args, cwd):
    done = subprocess.run([sys.executable, "-m", "onegraph.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"onegraph {' '.join(args)}:\n{done.stderr[-2000:]}"
    return done.stdout


def test_python_blocks_are_all_covered():
    """Every python block of the README is one of those the tests below run."""
    keys = ('g = Graph("main")', 'from_onnx("resnet50.onnx")', "og.RunMetadata()",
            "og.train.Adam(1e-3)")
    blocks = _blocks("python")
    assert len(blocks) == len(keys)
    for block in blocks:
        assert sum(k in block for k in keys) == 1, block[:200]


def test_format_example_and_its_commands(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(compile(_python_block('g = Graph("main")'), "README", "exec"), scope)
    m = scope["m"]
    sess_inputs = np.arange(8, dtype=np.float32).reshape(2, 4)
    import onegraph as og

    (y,) = og.Session(m).run(["y"], {"x": sess_inputs})
    np.testing.assert_array_equal(y, sess_inputs @ np.ones((4, 2), np.float32))
    commands = _commands("onegraph verify tiny.og")
    assert [c[0] for c in commands] == ["info", "info", "verify"]
    for args in commands:
        if args[1] == "model.onnx":
            continue   # the README's stand-in for any ONNX file; info on ONNX below
        _onegraph(args, tmp_path)


def _classifier_onnx(path):
    """A small convnet saved as `path` with the README's names: input "data", output
    "prob" (softmax over 10 classes)."""
    import onnx
    from onnx import TensorProto as T
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
               for n, s in (("w", (8, 3, 3, 3)), ("fc", (8, 10)))]
    nodes = [helper.make_node("Conv", ["data", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("MatMul", ["f", "fc"], ["logits"]),
             helper.make_node("Softmax", ["logits"], ["prob"], axis=1)]
    graph = helper.make_graph(nodes, "classifier",
                              [helper.make_tensor_value_info("data", T.FLOAT,
                                                             [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("prob", T.FLOAT, [1, 10])],
                              initializer=weights)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              str(path))


def test_onnx_and_profiling_examples_and_their_commands(tmp_path, monkeypatch):
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    import onegraph as og

    monkeypatch.chdir(tmp_path)
    _classifier_onnx(tmp_path / "resnet50.onnx")
    image = np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype(np.float32)
    scope = {"og": og, "image": image}
    exec(compile(_python_block('from_onnx("resnet50.onnx")'), "README", "exec"), scope)
    want = ort.InferenceSession(str(tmp_path / "resnet50.onnx"),
                                providers=["CPUExecutionProvider"]).run(None,
                                                                        {"data": image})
    np.testing.assert_allclose(scope["probs"], want[0], rtol=1e-5, atol=1e-6)
    back = ort.InferenceSession(str(tmp_path / "back.onnx"),
                                providers=["CPUExecutionProvider"]).run(None,
                                                                        {"data": image})
    np.testing.assert_allclose(back[0], want[0], rtol=1e-5, atol=1e-6)

    exec(compile(_python_block("og.RunMetadata()"), "README", "exec"), scope)
    assert len(scope["meta"].run_us) == 20
    assert os.path.getsize(tmp_path / "trace.json") > 0

    os.replace(tmp_path / "resnet50.onnx", tmp_path / "model.onnx")
    np.save(tmp_path / "image.npy", image)
    shutil.copy(os.path.join(HERE, "train", "data", "tf_graph_defs", "cnn_nhwc.pb"),
                tmp_path / "frozen.pb")  # a TF1 frozen graph TF wrote
    _onegraph(["info", "model.onnx"], tmp_path)
    for args in _commands("onegraph convert model.onnx model.og") \
            + _commands("--profile --trace trace.json"):
        _onegraph(args, tmp_path)
    assert og.load(str(tmp_path / "frozen.og")).signatures["serving"].outputs.keys() == {
        "probs"}
    out = np.load(tmp_path / "out" / "prob.npy", allow_pickle=False)
    np.testing.assert_allclose(out, want[0], rtol=1e-5, atol=1e-6)
    check = ort.InferenceSession(str(tmp_path / "model.onnx"),
                                 providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(check.run(None, {"data": image})[0], want[0], rtol=1e-5,
                               atol=1e-6)


def test_training_example_and_its_commands(tmp_path, monkeypatch):
    """The MLP trains on a separable task; `onegraph train` then takes the saved file
    and the data alone, and the trained model converts to ONNX."""
    ort = pytest.importorskip("onnxruntime")
    import onegraph as og

    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(2)
    xb = rng.standard_normal((64, 64)).astype(np.float32)
    yb = np.argmax(xb[:, :10], axis=1).astype(np.int64)
    scope = {"xb": xb, "yb": yb}
    exec(compile(_python_block("og.train.Adam(1e-3)"), "README", "exec"), scope)
    assert np.isfinite(scope["loss_value"])
    np.savez(tmp_path / "digits.npz", x=xb, y=yb)
    for args in _commands("onegraph train mlp.og"):
        _onegraph(args, tmp_path)
    trained = og.load(str(tmp_path / "trained.og"))
    sess = og.Session(trained)
    logits = sess.run_signature("serving", x=xb)["logits"]
    assert (np.argmax(logits, axis=1) == yb).mean() > 0.9   # 500 Adam steps on 64 rows
    exported = ort.InferenceSession(str(tmp_path / "trained.onnx"),
                                    providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(exported.run(None, {"x": xb})[0], logits, rtol=1e-4,
                               atol=1e-4)

"""The end-to-end demo: each stage of onegraph, run in order on a fresh machine.

Stage 1 (format): build a small graph by hand, save it to a `.og` file, load it back
(memory-mapped, verified) and print what `onegraph info` prints.

Stage 2 (ONNX): take a light model-zoo model shipped in the onnx wheel
(light_squeezenet) with its constant-filled weights replaced by seeded random ones (the
shipped weights make every output 0.001, which would hide kernel bugs), import it, save
it as `.og`, run it with the Session on a seeded random input, check it against
onnxruntime, export it back to ONNX and check onnxruntime's result on that too.

Stage 3 (training): build an MLP on the bundled UCI digits with the graph API, train it
with Adam, save it with `serving` and `train` signatures, reload the file and print the
test accuracy of the saved model.
"""

import importlib.util
import os
import tempfile

import numpy as np

import onegraph as og
from onegraph.format import Graph, Model
from onegraph.info import describe, format_text
from onegraph.ops.inference import annotate_graph

# the light models and their random-weight variants, shared with tests and benchmarks;
# loaded from its file (numpy and onnx only), so no folder of the repository goes on
# sys.path, where it would shadow installed packages (datasets, format, ...)
_ZOO = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    "tests", "convert", "model_zoo.py")


def _model_zoo():
    spec = importlib.util.spec_from_file_location("onegraph_demo_model_zoo", _ZOO)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

# Session and export against onnxruntime, float32 (the random-weight tolerance)
RTOL = ATOL = 1e-4
# the trained MLP's test accuracy below which the demo fails
MIN_ACCURACY = 0.9


def stage_format(workdir: str) -> str:
    """Build y = relu(x @ W + b), save it, load it, and show its summary."""
    rng = np.random.default_rng(0)
    g = Graph("mlp")
    x = g.add_input("x", "float32", [-1, 4])
    w = g.add_constant("W", rng.standard_normal((4, 3)).astype(np.float32))
    b = g.add_constant("b", np.zeros(3, np.float32))
    (h,) = g.add_node("MatMul", [x, w], ["h"])
    (z,) = g.add_node("Add", [h, b], ["z"])
    (y,) = g.add_node("Relu", [z], ["y"])
    g.outputs = [y]
    annotate_graph(g)  # infer the dtypes and shapes of h, z and y from the op definitions
    model = Model(graphs=[g], opset_imports={"": 21}, metadata={"demo": "stage 1"})
    model.add_signature("serving", inputs={"x": x}, outputs={"y": y})
    path = os.path.join(workdir, "mlp.og")
    og.save(model, path)
    loaded = og.load(path, check_data=True)
    assert loaded == model, "round trip changed the model"
    print("== stage 1: format ==")
    print(format_text(describe(loaded)))
    return path


def _check_close(what: str, got: np.ndarray, want: np.ndarray) -> None:
    """Print the max abs diff; exit with a message when outside RTOL/ATOL."""
    diff = float(np.abs(got - want).max())
    print(f"{what}: max abs diff {diff:.3g} (outputs up to {float(np.abs(want).max()):.3g})")
    if got.shape != want.shape or not np.allclose(got, want, rtol=RTOL, atol=ATOL):
        raise SystemExit(f"demo failed: {what} differ beyond rtol {RTOL}, atol {ATOL}")


def stage_onnx(workdir: str) -> None:
    """ONNX -> .og -> Session vs onnxruntime -> ONNX -> onnxruntime, checked."""
    import onnx
    import onnxruntime as ort

    from onegraph.convert import from_onnx, to_onnx
    zoo = _model_zoo()

    print("== stage 2: ONNX import/export ==")
    opts = ort.SessionOptions()
    opts.log_severity_level = 3  # the zoo model lists its weights as inputs; ORT warns
    # expose_logits: the Softmax's input is an output too, so a saturated softmax
    # cannot hide a difference
    variant = zoo.random_weight_variant(onnx.load(zoo.light_model_path("squeezenet")),
                                        seed=0, expose_logits=True)
    src = os.path.join(workdir, "squeezenet_random.onnx")
    onnx.save(variant, src)
    model = from_onnx(src)
    og_path = os.path.join(workdir, "squeezenet.og")
    og.save(model, og_path)
    loaded = og.load(og_path)
    sig = loaded.signatures["serving"]
    (key,) = sig.inputs
    shape = [d if d > 0 else 1 for d in loaded.graph.tensors[sig.inputs[key]].shape]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    ours = og.Session(loaded).run_signature("serving", **{key: x})
    names = [o.name for o in variant.graph.output]
    ref = ort.InferenceSession(src, opts, providers=["CPUExecutionProvider"]).run(
        names, {key: x})
    print(f"{os.path.basename(src)} -> {og_path}: {len(loaded.graph.nodes)} nodes")
    for name, want in zip(names, ref):
        _check_close(f"Session vs onnxruntime, {name}", ours[name], want)
    onnx_path = os.path.join(workdir, "squeezenet_back.onnx")
    to_onnx(loaded, onnx_path)
    back = ort.InferenceSession(onnx_path, opts, providers=["CPUExecutionProvider"]).run(
        names, {key: x})
    print(f"exported {onnx_path}")
    for name, got, want in zip(names, back, ref):
        _check_close(f"onnxruntime on the export vs on the original, {name}", got, want)


def stage_train(workdir: str) -> float:
    """Train a 64-256-256-10 MLP on digits, save it, reload it, report test accuracy."""
    xtr, ytr = og.datasets.digits("train")
    xte, yte = og.datasets.digits("test")
    xtr = xtr.reshape(-1, 64).astype(np.float32) / 16
    xte = xte.reshape(-1, 64).astype(np.float32) / 16
    g = og.Graph()
    with g.as_default():
        og.set_random_seed(0)
        x = og.placeholder(og.float32, [None, 64], name="x")
        y = og.placeholder(og.int64, [None], name="y")
        h = og.nn.dense(x, 256, activation=og.nn.relu, name="fc1")
        h = og.nn.dense(h, 256, activation=og.nn.relu, name="fc2")
        logits = og.nn.dense(h, 10, name="logits")
        loss = og.reduce_mean(og.nn.sparse_softmax_cross_entropy(labels=y, logits=logits))
        train_op = og.train.Adam(1e-3).minimize(loss)
    sess = og.Session(g, seed=0)
    rng = np.random.default_rng(0)
    for epoch in range(10):
        order = rng.permutation(len(ytr))
        for i in range(0, len(order), 64):
            b = order[i:i + 64]
            loss_value, _ = sess.run([loss, train_op], {x: xtr[b], y: ytr[b]})
    path = os.path.join(workdir, "digits_mlp.og")
    og.save(g, path, session=sess, signatures={
        "serving": og.signature(inputs={"x": x}, outputs={"logits": logits}),
        "train": og.signature(inputs={"x": x, "y": y}, outputs={"loss": loss},
                              targets=[train_op])})
    served = og.Session(og.load(path)).run_signature("serving", x=xte)["logits"]
    acc = float(np.mean(np.argmax(served, 1) == yte))
    print("== stage 3: training ==")
    print(f"MLP 64-256-256-10, Adam, 10 epochs: final batch loss {loss_value:.4f}")
    print(f"saved {path} ({os.path.getsize(path)} bytes); test accuracy of the saved "
          f"model: {acc:.2%}")
    if acc < MIN_ACCURACY:  # this MLP reaches about 98%; chance is 10%
        raise SystemExit(f"demo failed: test accuracy {acc:.2%} is under {MIN_ACCURACY:.0%}")
    return acc


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="onegraph-demo-") as workdir:
        stage_format(workdir)
        stage_onnx(workdir)
        stage_train(workdir)
    print("demo finished")


if __name__ == "__main__":
    main()

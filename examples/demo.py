"""The end-to-end demo: each stage of onegraph, run in order on a fresh machine.

Stage 1 (format): build a small graph by hand, save it to a `.og` file, load it back
(memory-mapped, verified) and print what `onegraph info` prints.
"""

import os
import tempfile

import numpy as np

import onegraph as og
from onegraph.format import Graph, Model
from onegraph.info import describe, format_text


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
    model = Model(graphs=[g], opset_imports={"": 21}, metadata={"demo": "stage 1"})
    model.add_signature("serving", inputs={"x": x}, outputs={"y": y})
    path = os.path.join(workdir, "mlp.og")
    og.save(model, path)
    loaded = og.load(path, check_data=True)
    assert loaded == model, "round trip changed the model"
    print("== stage 1: format ==")
    print(format_text(describe(loaded)))
    return path


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="onegraph-demo-") as workdir:
        stage_format(workdir)
    print("demo finished")


if __name__ == "__main__":
    main()

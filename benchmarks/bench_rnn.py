"""Latency of onegraph's RNN, GRU and LSTM against onnxruntime's, one node each.

Each case is a one-node ONNX model (random weights and biases, opset 17) imported with
`from_onnx` and run with the Session, against an onnxruntime CPU session of the same
model, both single-threaded. The two runtimes take turns run by run (see
bench_inference.py) and the medians of --runs runs are printed, with their ratio and
the largest absolute difference between the outputs.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python3 benchmarks/bench_rnn.py [--runs 50]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from bench_inference import _median_ms, ort_session  # noqa: E402

_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}

# (op, sequence length, batch, input size, hidden size, direction): a speech/text
# encoder layer at batch 1, a batched bidirectional tagger, and a small control model
CASES = [
    ("LSTM", 64, 1, 128, 256, "forward"),
    ("GRU", 64, 1, 128, 256, "forward"),
    ("RNN", 64, 1, 128, 256, "forward"),
    ("LSTM", 128, 8, 64, 128, "bidirectional"),
    ("GRU", 128, 8, 64, 128, "bidirectional"),
    ("LSTM", 32, 1, 32, 32, "forward"),
]


def one_node_model(op, seq, batch, in_size, hidden, direction, rng):
    """A one-node `op` model with random W, R and B initializers, and its feed."""
    from onnx import TensorProto, helper, numpy_helper

    nd = 2 if direction == "bidirectional" else 1
    g = _GATES[op]
    inits = [numpy_helper.from_array(
        (0.1 * rng.standard_normal(shape)).astype(np.float32), name)
        for name, shape in (("W", (nd, g * hidden, in_size)), ("R", (nd, g * hidden, hidden)),
                            ("B", (nd, 2 * g * hidden)))]
    outputs = ["Y", "Y_h", "Y_c"] if op == "LSTM" else ["Y", "Y_h"]
    node = helper.make_node(op, ["X", "W", "R", "B"], outputs, hidden_size=hidden,
                            direction=direction)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                    [seq, batch, in_size])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    feeds = {"X": rng.standard_normal((seq, batch, in_size)).astype(np.float32)}
    return model, feeds


def main(argv=None) -> int:
    import onegraph as og
    from onegraph.convert import from_onnx

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args(argv)
    if args.runs < 1 or args.warmup < 0:
        ap.error("--runs must be at least 1 and --warmup at least 0")
    rng = np.random.default_rng(0)
    print(f"{'case':<36} {'onegraph ms':>12} {'ORT ms':>8} {'ratio':>6} {'max|diff|':>10}")
    for op, seq, batch, in_size, hidden, direction in CASES:
        model, feeds = one_node_model(op, seq, batch, in_size, hidden, direction, rng)
        outputs = [o.name for o in model.graph.output]
        ort_sess = ort_session(model)
        og_sess = og.Session(from_onnx(model))
        want = ort_sess.run(outputs, feeds)
        got = og_sess.run(outputs, feeds)
        diff = max(float(np.max(np.abs(g - w))) for g, w in zip(got, want))
        t_og, t_ort = _median_ms([lambda: og_sess.run(outputs, feeds),
                                  lambda: ort_sess.run(outputs, feeds)],
                                 args.runs, args.warmup)
        label = f"{op} T={seq} B={batch} I={in_size} H={hidden} {direction[:5]}"
        print(f"{label:<36} {t_og:12.2f} {t_ort:8.2f} {t_og / t_ort:6.2f} {diff:10.2e}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

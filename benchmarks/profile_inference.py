"""Where the time goes: onegraph's per-op-type kernel time against onnxruntime's, per model.

The models and inputs are bench_inference.py's (the onnx wheel's light models and the
transformer encoder), both runtimes single-threaded at batch 1. onegraph's times come
from `og.RunMetadata` (each plan step's kernel), onnxruntime's from its own profiler
(`SessionOptions.enable_profiling`, each node's kernel time); both are medians per node
over --runs runs, summed per op type. onnxruntime's fused nodes count under the op they
fuse into (FusedConv as Conv, FusedGemm as Gemm, ...), its layout conversions
(ReorderInput/ReorderOutput) under "(layout)"; onegraph's fused steps count under
their first op (a Conv that took in its BatchNormalization and Relu is a Conv).
Profiling costs both runtimes some time per node: the run times printed here are for
the profiled runs; bench_inference.py measures the latency ratio.

    python3 benchmarks/profile_inference.py [--models squeezenet,shufflenet] [--runs 20]
        [--top 10]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import collections  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from bench_inference import load_models, ort_session  # noqa: E402

# onnxruntime op names that stand for an ONNX op they fused or rewrote
_ORT_OP_OF = {"FusedConv": "Conv", "FusedGemm": "Gemm", "FusedMatMul": "MatMul",
              "ReorderInput": "(layout)", "ReorderOutput": "(layout)",
              "NhwcMaxPool": "MaxPool", "QuickGelu": "Gelu", "BiasGelu": "Gelu",
              "FastGelu": "Gelu", "SkipLayerNormalization": "LayerNormalization"}


def onegraph_profile(model, feeds, runs, warmup):
    """({op type: median ms per run}, [(median us, op type, node)], median run ms)."""
    import onegraph as og
    from onegraph.convert import from_onnx

    outputs = [o.name for o in model.graph.output]
    sess = og.Session(from_onnx(model))
    for _ in range(warmup):
        sess.run(outputs, feeds)
    meta = og.RunMetadata()
    for _ in range(runs):
        sess.run(outputs, feeds, run_metadata=meta)
    nodes = [(med, op, node) for node, op, med, _ in meta.node_medians()]
    by_op = {op: us / 1e3 for op, us in meta.by_op_type().items()}
    return by_op, nodes, statistics.median(meta.run_us) / 1e3


def ort_profile(model, feeds, runs, warmup):
    """The same for onnxruntime, from its profiler's per-node kernel times."""
    sess = ort_session(model, enable_profiling=True)
    for _ in range(warmup + runs):
        sess.run(None, feeds)
    path = sess.end_profiling()
    try:
        with open(path) as f:
            events = json.load(f)
    finally:
        os.remove(path)
    per_node = collections.defaultdict(list)
    op_of, runs_of = {}, []
    for e in events:
        if e.get("cat") == "Session" and e.get("name") == "model_run":
            runs_of.append(e["dur"])
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
            per_node[e["name"]].append(e["dur"])
            op = e.get("args", {}).get("op_name", "?")
            if "/MatMulAddFusion" in e["name"]:  # a MatMul + Add rewritten as Gemm
                op = "MatMul"
            op_of[e["name"]] = _ORT_OP_OF.get(op, op)
    # the profiled session's warm-up runs are in the trace too: keep the last `runs`
    nodes = [(statistics.median(d[-runs:]), op_of[name], name[:-len("_kernel_time")])
             for name, d in per_node.items()]
    by_op: dict[str, float] = collections.defaultdict(float)
    for us, op, _ in nodes:
        by_op[op] += us / 1e3
    run_ms = statistics.median(runs_of[-runs:]) / 1e3 if runs_of else float("nan")
    return dict(by_op), nodes, run_ms


def report(name, og_prof, ort_prof, top):
    """Print one model's table: per op type ms for both and their ratio, then each
    runtime's slowest nodes."""
    og_ops, og_nodes, og_run = og_prof
    ort_ops, ort_nodes, ort_run = ort_prof
    print(f"\n{name}: run {og_run:.2f} ms onegraph, {ort_run:.2f} ms onnxruntime "
          f"(ratio {og_run / ort_run:.2f}); kernels {sum(og_ops.values()):.2f} vs "
          f"{sum(ort_ops.values()):.2f} ms")
    print(f"  {'op type':24s} {'onegraph ms':>11s} {'ORT ms':>8s} {'ratio':>6s} {'excess ms':>9s}")
    ops = sorted(set(og_ops) | set(ort_ops),
                 key=lambda op: -(og_ops.get(op, 0.0) - ort_ops.get(op, 0.0)))
    for op in ops:
        a, b = og_ops.get(op, 0.0), ort_ops.get(op, 0.0)
        ratio = f"{a / b:6.2f}" if a and b else "     -"
        print(f"  {op:24s} {a:11.3f} {b:8.3f} {ratio} {a - b:9.3f}")
    for label, nodes in (("onegraph", og_nodes), ("onnxruntime", ort_nodes)):
        print(f"  slowest {label} nodes (median us):")
        for us, op, node in sorted(nodes, key=lambda r: -r[0])[:top]:
            print(f"    {us:9.1f}  {op:20s} {node}")


def main(argv=None) -> int:
    from tests.convert import model_zoo as zoo

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(zoo.light_model_names() + ["transformer"]))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--top", type=int, default=8, help="slowest nodes listed per runtime")
    args = ap.parse_args(argv)
    if args.runs < 1 or args.warmup < 0:
        ap.error("--runs must be at least 1 and --warmup at least 0")
    for name, model, feeds in load_models(args.models.split(",")):
        report(name, onegraph_profile(model, feeds, args.runs, args.warmup),
               ort_profile(model, feeds, args.runs, args.warmup), args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())

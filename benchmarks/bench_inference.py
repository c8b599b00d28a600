"""Inference latency of onegraph's Session against onnxruntime on real models.

Models: the 9 "light" models shipped in the onnx wheel (onnx/backend/test/data/light,
fed the backend runner's ``arange(n)/n`` input) and a transformer encoder built with
onnx.helper (4 layers, d_model 256, 4 heads, FFN 1024, seq 128, batch 1, Gelu, seeded
random weights). Both runtimes run single-threaded (OMP/OpenBLAS threads set to 1
before numpy is imported; ORT intra/inter-op threads 1), batch 1; the latency is the
median of --runs runs after --warmup warm-up runs. Initializers are removed from the
graph inputs first (the light models are IR 3, which lists them), so both runtimes may
treat weights as constants. The two runtimes take turns run by run, so a burst of load on
a shared machine hits both alike. The table also gives the max abs difference of the outputs.

    python3 benchmarks/bench_inference.py [--models squeezenet,transformer] [--runs 20]
        [--blas auto|numpy|mkl] [--jit auto|numpy|numba] [--dnnl auto|numpy|onednn]

--blas picks onegraph's backend for products with constant weights (ops/blas.py: Intel
MKL's packed GEMM when the `mkl` extra is installed, numpy's matmul otherwise); the
default is ONEGRAPH_BLAS's choice ("auto"). --jit picks the backend for the kernels with
a compiled form (ops/jit.py: numba's depthwise convs, 3x3/2 pools and BatchNormalization
passes when the `jit` extra is installed, numpy's otherwise); the default is
ONEGRAPH_JIT's choice. --dnnl picks the backend for 2-D float32 convs, the Session's
conv-net chains and products with constant float32 weights (ops/onednn*.py: oneDNN's
kernels when the `onednn` extra is installed, conv.py's, MKL's or numpy's otherwise);
the default is ONEGRAPH_DNNL's choice. The backends used are printed first.

Target: every model within 1.5x of onnxruntime.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from tests.convert import model_zoo as zoo  # noqa: E402


def _clean(model: onnx.ModelProto) -> onnx.ModelProto:
    """Drop initializers from the graph inputs (IR >= 4 allows it)."""
    inits = {t.name for t in model.graph.initializer}
    keep = [v for v in model.graph.input if v.name not in inits]
    del model.graph.input[:]
    model.graph.input.extend(keep)
    model.ir_version = max(model.ir_version, 4)
    return model


def load_models(names):
    """[(name, ModelProto, feeds)] for the requested names."""
    out = []
    for name in names:
        if name == "transformer":
            model = zoo.transformer_encoder()
            feeds = {"x": zoo.transformer_input()}
        else:
            model = _clean(onnx.load(zoo.light_model_path(name)))
            feeds = {i.name: zoo.light_input(i) for i in zoo.graph_feeds(model)}
        out.append((name, model, feeds))
    return out


def _median_ms(fns, runs, warmup):
    """Median ms of each function; the functions take turns run by run, so a burst of
    load from other processes on a shared machine hits both runtimes alike."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    times = [[] for _ in fns]
    for _ in range(runs):
        for fn, ts in zip(fns, times):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return [1e3 * statistics.median(ts) for ts in times]


def ort_session(model, enable_profiling=False):
    """A single-threaded onnxruntime CPU session of `model` (optionally profiling)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    so.enable_profiling = enable_profiling
    return ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])


def bench_one(model, feeds, runs, warmup):
    import onegraph as og
    from onegraph.convert import from_onnx

    outputs = [o.name for o in model.graph.output]
    ort_sess = ort_session(model)
    og_sess = og.Session(from_onnx(model))
    want = ort_sess.run(outputs, feeds)
    got = og_sess.run(outputs, feeds)
    diff = max(float(np.max(np.abs(np.asarray(g, np.float64) - w))) for g, w in zip(got, want))
    t_og, t_ort = _median_ms([lambda: og_sess.run(outputs, feeds),
                              lambda: ort_sess.run(outputs, feeds)], runs, warmup)
    return t_og, t_ort, diff


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(zoo.light_model_names() + ["transformer"]))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--blas", choices=("auto", "numpy", "mkl"),
                    default=os.environ.get("ONEGRAPH_BLAS", "auto"))
    ap.add_argument("--jit", choices=("auto", "numpy", "numba"),
                    default=os.environ.get("ONEGRAPH_JIT", "auto"))
    ap.add_argument("--dnnl", choices=("auto", "numpy", "onednn"),
                    default=os.environ.get("ONEGRAPH_DNNL", "auto"))
    args = ap.parse_args(argv)
    names = [n for n in args.models.split(",") if n]
    from onegraph.ops import blas, jit, onednn

    print(f"onegraph's products with constant weights: {blas.use_backend(args.blas)}; "
          f"compiled kernels: {jit.use_backend(args.jit)}; "
          f"convolutions and conv-net chains: {onednn.use_backend(args.dnnl)}")
    print(f"{'model':<14} {'onegraph ms':>12} {'ORT ms':>10} {'ratio':>7} {'max|diff|':>10}")
    worst = 0.0
    for name, model, feeds in load_models(names):
        t_og, t_ort, diff = bench_one(model, feeds, args.runs, args.warmup)
        ratio = t_og / t_ort
        worst = max(worst, ratio)
        flag = "" if ratio <= 1.5 else "  > 1.5x"
        print(f"{name:<14} {t_og:12.2f} {t_ort:10.2f} {ratio:7.2f} {diff:10.2e}{flag}",
              flush=True)
    print(f"worst ratio {worst:.2f} (target <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

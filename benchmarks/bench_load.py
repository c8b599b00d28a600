"""Load time and memory of `onegraph.load` against `onnx.load` for large models.

For each size, writes a model of float32 constants to a temp dir on disk, twice: as
`.og` (onegraph.save) and as `.onnx` (the same arrays as initializers, one protobuf).
Each measurement runs in a fresh Python process so resident memory is not polluted by
building the models:

- onegraph: median wall time of >= 20 `onegraph.load` calls; RSS growth after a load
  (weights not touched yet) and after summing every weight (pages faulted in).
- onnx: median of `onnx.load` calls (fewer repeats: each one parses the whole file);
  RSS growth after a load.

Both read from a warm page cache (the files were just written). Targets: onegraph
load time flat in model size, under 20 ms for 1 GiB; RSS growth under 16 MiB until
the weights are touched.

    python3 benchmarks/bench_load.py                 # 16, 256 and 1024 MiB
    python3 benchmarks/bench_load.py --sizes 16,64   # MiB
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

MIB = 1 << 20
PIECES = 4  # constants per model


def rss_bytes() -> int:
    """Resident set size of this process (psutil when available, else /proc)."""
    try:
        import psutil

        return psutil.Process().memory_info().rss
    except ImportError:  # pragma: no cover - psutil is a dev dependency
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def weights(size_mib: int) -> list[np.ndarray]:
    n = size_mib * MIB // 4 // PIECES
    return [np.full(n, 0.25 * (k + 1), np.float32) for k in range(PIECES)]


def write_og(path: str, arrays: list[np.ndarray]) -> None:
    import onegraph
    from onegraph.format import Graph, Model

    g = Graph("main")
    x = g.add_input("x", "float32", [arrays[0].size])
    for k, a in enumerate(arrays):
        g.add_constant(f"w{k}", a)
    (y,) = g.add_node("Add", [x, "w0"], ["y"])
    g.outputs = [y]
    onegraph.save(Model(graphs=[g], opset_imports={"": 21}), path)


def write_onnx(path: str, arrays: list[np.ndarray]) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    inits = [numpy_helper.from_array(a, f"w{k}") for k, a in enumerate(arrays)]
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w0"], ["y"])], "main",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [arrays[0].size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [arrays[0].size])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    del inits
    onnx.save_model(model, path)


# -- measurements (each in a child process) ---------------------------------------------

def child_og(path: str, repeat: int) -> dict:
    import onegraph

    onegraph.load(path)  # warm the imports, not the measurement
    base = rss_bytes()
    model = onegraph.load(path)
    after_load = rss_bytes() - base
    total = sum(float(t.data.sum(dtype=np.float64)) for t in model.graph.tensors
                if t.data is not None)
    after_touch = rss_bytes() - base
    del model
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        m = onegraph.load(path)
        times.append(time.perf_counter() - start)
        del m
    return {"time": statistics.median(times), "rss_load": after_load,
            "rss_touch": after_touch, "checksum": total}


def child_onnx(path: str, repeat: int) -> dict:
    import onnx

    base = rss_bytes()
    start = time.perf_counter()
    model = onnx.load(path)
    first = time.perf_counter() - start
    after_load = rss_bytes() - base
    del model
    times = [first]
    for _ in range(repeat - 1):
        start = time.perf_counter()
        m = onnx.load(path)
        times.append(time.perf_counter() - start)
        del m
    return {"time": statistics.median(times), "rss_load": after_load}


def measure(kind: str, path: str, repeat: int) -> dict:
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", kind, path,
                          "--repeat", str(repeat)], check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1e3:9.2f}"


def fmt_mib(n: float) -> str:
    return f"{n / MIB:9.1f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="16,256,1024",
                        help="comma-separated model sizes in MiB (default 16,256,1024)")
    parser.add_argument("--repeat", type=int, default=20,
                        help="onegraph loads per size for the median (>= 20)")
    parser.add_argument("--onnx-repeat", type=int, default=5, help="onnx.load repeats")
    parser.add_argument("--tmpdir", default=None, help="where to write the model files")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        kind, path = args.child
        result = child_og(path, args.repeat) if kind == "og" else child_onnx(
            path, args.repeat)
        print(json.dumps(result))
        return 0

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    repeat = max(args.repeat, 20)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_load_", dir=args.tmpdir) as folder:
        for size in sizes:
            og_path = os.path.join(folder, f"m{size}.og")
            onnx_path = os.path.join(folder, f"m{size}.onnx")
            arrays = weights(size)
            write_og(og_path, arrays)
            write_onnx(onnx_path, arrays)
            expected = sum(float(a.sum(dtype=np.float64)) for a in arrays)
            del arrays
            og = measure("og", og_path, repeat)
            assert abs(og["checksum"] - expected) <= 1e-6 * abs(expected), "weights differ"
            ox = measure("onnx", onnx_path, args.onnx_repeat)
            rows.append((size, os.path.getsize(og_path), og, ox))
            os.unlink(og_path)
            os.unlink(onnx_path)

    print(f"onegraph.load: median of {repeat} loads; onnx.load: median of "
          f"{args.onnx_repeat}; warm page cache; RSS growth in MiB")
    header = (f"{'model':>8} {'file MiB':>9} | {'og ms':>9} {'og RSS':>9} {'touched':>9} | "
              f"{'onnx ms':>9} {'onnx RSS':>9} | {'time ratio':>10}")
    print(header)
    print("-" * len(header))
    for size, file_size, og, ox in rows:
        print(f"{size:>5}MiB {fmt_mib(file_size)} | {fmt_ms(og['time'])} "
              f"{fmt_mib(og['rss_load'])} {fmt_mib(og['rss_touch'])} | "
              f"{fmt_ms(ox['time'])} {fmt_mib(ox['rss_load'])} | "
              f"{ox['time'] / og['time']:9.0f}x")
    ok = all(og["time"] < 0.020 and og["rss_load"] < 16 * MIB for _, _, og, _ in rows)
    print("targets (load < 20 ms, RSS growth < 16 MiB before touching):",
          "met" if ok else "NOT met")
    return 0


if __name__ == "__main__":
    sys.exit(main())

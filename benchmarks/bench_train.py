"""Training step time of onegraph vs PyTorch CPU, and the Session's per-op overhead.

    python benchmarks/bench_train.py [--steps 50]

Both frameworks run single-threaded (OMP/MKL/OpenBLAS thread counts set to 1 before
numpy and torch load; torch.set_num_threads(1)) on the same batches (64 digits images):

* MLP 64-256-256-10, Adam, softmax cross-entropy;
* CNN conv3x3(32)-relu-maxpool-conv3x3(64)-relu-maxpool-dense(128)-relu-dense(10), Adam.

Same architecture, float32 data already in memory (16 batches, drawn once), 10 warm-up
steps excluded; the two frameworks then alternate in blocks of 10 steps and the median
of `--steps` steps each is reported.

Then a chain of 1,000 tiny Add ops on a 1-element tensor is run by the Session; the
per-op time is reported in total, for the kernel alone (the same kernels called in a
plain Python loop), and their difference (the executor's own dispatch overhead).
PyTorch is optional: without it only onegraph's numbers are printed.
"""

from __future__ import annotations

import argparse
import os
import time

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402

import onegraph as og  # noqa: E402
from onegraph.ops.elementwise import quiet_fp_errors  # noqa: E402


def _data(flat, batch=64):
    images, labels = og.datasets.digits("train")
    x = images.astype(np.float32) / 16
    x = x.reshape(-1, 64) if flat else x.reshape(-1, 1, 8, 8)
    rng = np.random.default_rng(0)
    batches = []
    for _ in range(16):
        rows = rng.integers(0, len(labels), batch)
        batches.append((x[rows], labels[rows]))
    return batches


def _median_steps(steps_fns, batches, steps, warmup=10, block=10):
    """Median step time of each step function. The functions take turns in blocks of
    `block` steps (the first step of a block re-warms the caches and is not timed), so
    load from other processes on a shared machine hits all of them alike instead of
    skewing whichever ran during a busy spell, while each still runs back to back as
    in a training loop."""
    for i in range(warmup):
        for step in steps_fns:
            step(*batches[i % len(batches)])
    times = [[] for _ in steps_fns]
    done = 0
    while done < steps:
        for step, ts in zip(steps_fns, times):
            for i in range(done, done + block + 1):
                xb, yb = batches[i % len(batches)]
                t = time.perf_counter()
                step(xb, yb)
                if i > done:
                    ts.append(time.perf_counter() - t)
        done += block
    return [float(np.median(ts)) for ts in times]


def og_model(kind):
    g = og.Graph()
    with g.as_default():
        og.set_random_seed(0)
        shape = [None, 64] if kind == "mlp" else [None, 1, 8, 8]
        x = og.placeholder(og.float32, shape, name="x")
        y = og.placeholder(og.int64, [None], name="y")
        if kind == "mlp":
            h = og.nn.dense(x, 256, activation=og.nn.relu, name="fc1")
            h = og.nn.dense(h, 256, activation=og.nn.relu, name="fc2")
        else:
            h = og.nn.conv2d(x, 32, 3, activation=og.nn.relu, name="conv1")
            h = og.nn.max_pool2d_layer(h, 2)
            h = og.nn.conv2d(h, 64, 3, activation=og.nn.relu, name="conv2")
            h = og.nn.max_pool2d_layer(h, 2)
            h = og.nn.dense(og.nn.flatten(h), 128, activation=og.nn.relu, name="fc")
        logits = og.nn.dense(h, 10, name="logits")
        loss = og.reduce_mean(og.nn.sparse_softmax_cross_entropy(y, logits))
        train = og.train.Adam(1e-3).minimize(loss)
    sess = og.Session(g)

    def step(xb, yb):
        sess.run([loss, train], {x: xb, y: yb})
    return step, len(g.ir_graph.nodes)


def torch_model(kind):
    import torch
    from torch import nn

    torch.set_num_threads(1)
    torch.manual_seed(0)
    if kind == "mlp":
        net = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                            nn.Linear(256, 10))
    else:
        net = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Flatten(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    def step(xb, yb):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(torch.from_numpy(xb)), torch.from_numpy(yb))
        loss.backward()
        opt.step()
    return step


def per_op_overhead(n_ops=1000, repeats=50):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [1], name="x")
        one = og.constant(np.float32([1.0]))
        y = x
        for _ in range(n_ops):
            y = og.raw_ops.Add(y, one)
    sess = og.Session(g)
    v = np.zeros(1, np.float32)
    sess.run(y, {x: v})
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        sess.run(y, {x: v})
        times.append(time.perf_counter() - t)
    total = float(np.median(times)) / n_ops
    kernel = og.ops.get_op("Add").kernel
    c = np.float32([1.0])
    ktimes = []
    # the Session runs kernels with numpy fp errors ignored once per run (kernels then
    # skip their own np.errstate): time the kernels the same way
    with quiet_fp_errors():
        for _ in range(repeats):
            a = v
            t = time.perf_counter()
            for _ in range(n_ops):
                (a,) = kernel([a, c], {}, None)
            ktimes.append(time.perf_counter() - t)
    kern = float(np.median(ktimes)) / n_ops
    return total, kern


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
        print("PyTorch is not installed: printing onegraph numbers only")
    print(f"{'model':6} {'onegraph ms':>12} {'torch ms':>10} {'ratio':>7}  (batch 64, "
          "median step, 1 thread)")
    for kind in ("mlp", "cnn"):
        batches = _data(kind == "mlp")
        step, n_nodes = og_model(kind)
        if have_torch:
            t_og, t_pt = _median_steps([step, torch_model(kind)], batches, args.steps)
            print(f"{kind:6} {t_og * 1e3:12.3f} {t_pt * 1e3:10.3f} {t_og / t_pt:7.2f}x  "
                  f"({n_nodes} graph nodes)")
        else:
            (t_og,) = _median_steps([step], batches, args.steps)
            print(f"{kind:6} {t_og * 1e3:12.3f} {'-':>10} {'-':>7}")
    total, kern = per_op_overhead()
    print(f"Session, chain of 1000 Add ops: {total * 1e6:.2f} us/op total, "
          f"{kern * 1e6:.2f} us/op in the Add kernel, {(total - kern) * 1e6:.2f} us/op "
          "executor overhead (target < 5)")


if __name__ == "__main__":
    main()

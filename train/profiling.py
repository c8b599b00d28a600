"""Per-node timings of Session runs: `RunMetadata`, TF1's `run_metadata` argument.

    meta = og.RunMetadata()
    for _ in range(20):
        sess.run(["prob"], {"data": image}, run_metadata=meta)
    print(meta.summary())            # per op type and slowest nodes, medians over runs
    meta.write_trace("trace.json")   # chrome://tracing / Perfetto, like onnxruntime's

A step is one entry of the Session's compiled plan, so fused nodes (a Conv that took
in its BatchNormalization and Relu) appear once, under the Conv's name. Nodes inside
If/Loop/Scan bodies are not listed; their time is part of the control-flow node's.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass

import numpy as np

from ..format.atomic import atomic_open


@dataclass(frozen=True)
class NodeStat:
    """One step of one run: the node (name, op type, position in the plan), when it
    started relative to the run's start and how long its kernel took (microseconds),
    and its outputs as (dtype name, shape) pairs ((None, None) for values that are not
    arrays: sequences, maps, optionals, dead values)."""

    run: int
    index: int
    node: str
    op_type: str
    start_us: float
    duration_us: float
    outputs: tuple


class RunMetadata:
    """Collects `NodeStat`s from every `Session.run(..., run_metadata=meta)` it is given.

    Attributes:
        step_stats: every recorded step, in run order.
        run_us: the wall time of each run's plan execution, microseconds.
    """

    def __init__(self):
        self.step_stats: list[NodeStat] = []
        self.run_us: list[float] = []
        self._lock = threading.Lock()  # runs in several threads may share one

    @property
    def runs(self) -> int:
        """How many runs were recorded."""
        return len(self.run_us)

    def _record_run(self, records: list, start_ns: int, end_ns: int) -> None:
        """Append one run's (index, node, t0_ns, t1_ns, outputs) records, the run
        having lasted from start_ns to end_ns (perf_counter_ns)."""
        with self._lock:
            run = self.runs
            for index, node, t0, t1, outputs in records:
                self.step_stats.append(NodeStat(run, index, node.name or f"#{index}",
                                                node.op_type, (t0 - start_ns) / 1e3,
                                                (t1 - t0) / 1e3, outputs))
            self.run_us.append((end_ns - start_ns) / 1e3)

    def node_medians(self) -> list[tuple[str, str, float, int]]:
        """(node, op type, median duration us, number of runs) per step position,
        in plan order (a position whose node changed between plans counts apart)."""
        groups: dict = {}
        for s in self.step_stats:
            groups.setdefault((s.index, s.node, s.op_type), []).append(s.duration_us)
        return [(node, op, float(np.median(d)), len(d))
                for (_, node, op), d in groups.items()]

    def by_op_type(self) -> dict[str, float]:
        """Median microseconds per run spent in each op type (sum over its nodes of
        their median), largest first."""
        totals: dict[str, float] = {}
        for _, op, med, _ in self.node_medians():
            totals[op] = totals.get(op, 0.0) + med
        return dict(sorted(totals.items(), key=lambda kv: -kv[1]))

    def summary(self, top: int = 15) -> str:
        """A text report: median run time, time per op type (nodes, median ms per run,
        share of the kernels' time) and the `top` slowest nodes with their outputs
        (none when top <= 0).

        Raises:
            TypeError: top is not an int.
        """
        if isinstance(top, (bool, np.bool_)) or not isinstance(top, (int, np.integer)):
            raise TypeError(f"RunMetadata.summary: top must be an int, got "
                            f"{type(top).__name__} {top!r:.60}")
        top = int(top)
        if not self.runs:
            return "no runs recorded"
        nodes = self.node_medians()
        kernels = sum(m for _, _, m, _ in nodes)
        counts: dict[str, int] = {}
        for _, op, _, _ in nodes:
            counts[op] = counts.get(op, 0) + 1
        lines = [f"{self.runs} run(s): median {np.median(self.run_us) / 1e3:.3f} ms per run, "
                 f"{kernels / 1e3:.3f} ms in {len(nodes)} kernel steps",
                 f"{'op type':24s} {'nodes':>5s} {'ms':>9s} {'share':>6s}"]
        for op, t in self.by_op_type().items():
            share = 100.0 * t / kernels if kernels else 0.0
            lines.append(f"{op:24s} {counts[op]:5d} {t / 1e3:9.3f} {share:5.1f}%")
        if top > 0:
            outputs = {}
            for s in self.step_stats:
                outputs.setdefault((s.node, s.op_type), s.outputs)
            lines.append(f"slowest {min(top, len(nodes))} nodes (median us):")
            for node, op, med, _ in sorted(nodes, key=lambda r: -r[2])[:top]:
                shapes = ", ".join(f"{d}{list(sh)}" if d else "-"
                                   for d, sh in outputs[(node, op)])
                lines.append(f"{med:10.1f}  {op:20s} {node[:32]:32s} -> {shapes}")
        return "\n".join(lines)

    def write_trace(self, path: str) -> str:
        """Write the recorded steps as a Chrome trace (JSON, open it in chrome://tracing
        or ui.perfetto.dev): one complete event per step, one row per run. The file is
        written atomically (temp file, fsync, rename). Returns `path`.

        Raises:
            OSError: the folder does not exist or is not writable.
        """
        events = [{"name": s.node, "cat": s.op_type, "ph": "X", "pid": 0, "tid": s.run,
                   "ts": round(s.start_us, 3), "dur": round(s.duration_us, 3),
                   "args": {"op_type": s.op_type, "index": s.index,
                            "outputs": [[d, list(sh)] if d else None
                                        for d, sh in s.outputs]}}
                  for s in self.step_stats]
        text = json.dumps({"traceEvents": events, "displayTimeUnit": "ms"})
        with atomic_open(path, "w", prefix=".trace-") as f:
            f.write(text)
        return path


def output_info(values) -> tuple:
    """(dtype name, shape) per output value; (None, None) for values that are not
    arrays or numpy scalars (sequences, maps, optionals, dead values)."""
    return tuple((v.dtype.name, tuple(v.shape))
                 if isinstance(v, (np.ndarray, np.generic)) else (None, None)
                 for v in values)

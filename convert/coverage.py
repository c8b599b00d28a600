"""Generate docs/onnx_coverage.md: every ONNX node test through import + Session.

    python -m onegraph.convert.coverage [--output docs/onnx_coverage.md]

Each node test case (generated in memory by `onnx.backend.test.case.node`) is
imported with `from_onnx` and run with the Session on all its data sets, then
compared with the reference outputs at the case's rtol/atol. Outcomes: pass; fail
(with the error); known (listed in an op family's KNOWN_FAILURES); skip (the case uses
ops the registry lacks, or element types onegraph has no dtype for). The report has a
table per op and the totals.
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import time
import warnings

import numpy as np

from ..errors import ConversionError


@functools.lru_cache(maxsize=1)
def all_node_cases() -> tuple:
    """Every ONNX backend node test case, generated in memory (the onnx wheel does not
    ship the node data directory)."""
    from onnx.backend.test.case import node

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tuple(node.collect_testcases(None))


def _ops_of(graph, out):
    for n in graph.node:
        out.add(("" if n.domain in ("", "ai.onnx") else n.domain, n.op_type))
        for a in n.attribute:
            if a.HasField("g"):
                _ops_of(a.g, out)
            for g in a.graphs:
                _ops_of(g, out)
    return out


def as_numpy(value):
    """Node test data as our values: TensorProtos (Cast cases) become arrays, lists
    (sequences) are converted element-wise, arrays and None pass through."""
    from onnx import TensorProto, numpy_helper

    if isinstance(value, TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, list):
        return [as_numpy(v) for v in value]
    return value


def _same(want, got, rtol, atol) -> str | None:
    """None when `got` matches `want`, else a short description of the mismatch."""
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return "sequence mismatch"
        for w, g in zip(want, got):
            why = _same(w, g, rtol, atol)
            if why:
                return why
        return None
    if want is None:
        return None if got is None else "expected an empty optional"
    want, got = np.asarray(want), np.asarray(got)
    if want.shape != got.shape:
        return f"shape {list(got.shape)} != {list(want.shape)}"
    if want.dtype == object or want.dtype.kind in "SU":
        w = [v.decode() if isinstance(v, bytes) else str(v) for v in want.reshape(-1)]
        return None if [str(v) for v in got.reshape(-1)] == w else "string values differ"
    if want.dtype != got.dtype:
        return f"dtype {got.dtype} != {want.dtype}"
    if want.dtype.kind in "biu":
        return None if np.array_equal(want, got) else "values differ"
    ok = np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                     equal_nan=True)
    return None if ok else "values differ beyond rtol/atol"


def _known_failures() -> dict[str, str]:
    from .. import ops
    from .known_failures import CONVERSION_KNOWN_FAILURES

    out = {}
    for family in ops._FAMILIES:
        out.update(getattr(family, "KNOWN_FAILURES", {}))
    out.update(CONVERSION_KNOWN_FAILURES)
    return out


def lookup_reason(name: str, *tables) -> str | None:
    """Reason of the first table entry that `name` equals or starts with, else None."""
    for table in tables:
        if name in table:
            return table[name]
        for prefix, why in table.items():
            if name.startswith(prefix):
                return why
    return None


def run_case(case, known) -> tuple[str, str]:
    """Run one node test case; returns (outcome, detail)."""
    from ..ops import REGISTRY
    from ..format import TensorKind
    from ..train.session import Session
    from .onnx_import import from_onnx

    missing = sorted(f"{d}::{o}" if d else o for d, o in _ops_of(case.model.graph, set())
                     if not REGISTRY.has(o, d))
    local = {f.name for f in case.model.functions}
    missing = [m for m in missing if m.split("::")[-1] not in local]
    if missing:
        return "skip", "no kernel: " + ", ".join(missing)
    try:
        model = from_onnx(case.model)
    except ConversionError as e:
        msg = str(e)
        if "element type" in msg:
            return "skip", msg.split(": ", 1)[-1][:160]
        why = lookup_reason(case.name, known)
        return ("known", why) if why else ("fail", f"import: {msg[:160]}")
    g = model.graph
    names = [g.tensors[i].name for i in g.inputs if g.tensors[i].kind is not TensorKind.CONSTANT]
    outs = [g.tensors[i].name for i in g.outputs]
    try:
        # seeded: a random op's case (Bernoulli) must not pass or fail by the draw,
        # so that the generated table is the same every time
        session = Session(model, seed=0)
        for inputs, outputs in case.data_sets:
            got = session.run(outs, dict(zip(names, [as_numpy(x) for x in inputs])))
            for k, want in enumerate(outputs):
                why = _same(as_numpy(want), got[k], case.rtol, case.atol)
                if why:
                    raise AssertionError(f"output {k}: {why}")
    except Exception as e:  # noqa: BLE001 - every failure is a table entry
        why = lookup_reason(case.name, known)
        if why:
            return "known", why
        return "fail", f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
    return "pass", ""


def _op_under_test(case, by_name) -> str:
    base = case.name[:-len("_expanded")] if case.name.endswith("_expanded") else case.name
    if base in by_name and len(by_name[base].model.graph.node) == 1:
        return by_name[base].model.graph.node[0].op_type
    nodes = case.model.graph.node
    if len(nodes) == 1:
        return nodes[0].op_type
    return "(multi-node: " + case.name + ")"


def generate(output: str | None = None) -> dict:
    """Run every node test case and write the markdown report to `output`.

    Returns the totals {outcome: count}. Raises OSError if the file cannot be written.
    """
    cases = all_node_cases()
    known = _known_failures()
    by_name = {c.name: c for c in cases}
    per_op: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    details: dict[str, list] = collections.defaultdict(list)
    totals: collections.Counter = collections.Counter()
    start = time.time()
    for case in cases:
        outcome, detail = run_case(case, known)
        op = _op_under_test(case, by_name)
        if op.startswith("(multi-node"):
            op = "(multi-node models)"
        per_op[op][outcome] += 1
        totals[outcome] += 1
        if outcome != "pass":
            details[op].append((case.name, outcome, detail))
    lines = ["# ONNX node test coverage", "",
             "Generated by `python -m onegraph.convert.coverage` (every case of "
             "`onnx.backend.test.case.node`: ONNX import, then the Session, compared with "
             "the reference outputs at the case's rtol/atol).", "",
             f"Totals: **{totals['pass']} pass**, {totals['fail']} fail, "
             f"{totals['known']} known failures, {totals['skip']} skipped, "
             f"{sum(totals.values())} cases ({time.time() - start:.0f} s).", "",
             "| op | pass | fail | known | skip | notes |", "|---|---:|---:|---:|---:|---|"]
    for op in sorted(per_op):
        c = per_op[op]
        notes = sorted({f"{o}: {d}" for _, o, d in details[op]})
        note = "; ".join(notes[:2]).replace("|", "\\|")
        if len(notes) > 2:
            note += f" (+{len(notes) - 2} more)"
        lines.append(f"| {op} | {c['pass']} | {c['fail']} | {c['known']} | {c['skip']} | "
                     f"{note} |")
    lines += ["", "## Cases not passing", "", "| case | outcome | reason |", "|---|---|---|"]
    for op in sorted(details):
        for name, outcome, detail in details[op]:
            lines.append(f"| {name} | {outcome} | {detail.replace('|', '/')} |")
    if output:
        os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
        with open(output, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    return dict(totals)


def main(argv=None) -> int:
    """Command line entry: writes the report and prints the totals."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", default=os.path.join(here, "docs", "onnx_coverage.md"))
    args = parser.parse_args(argv)
    totals = generate(args.output)
    print(f"{args.output}: {totals}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

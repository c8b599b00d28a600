"""Rewrite the exported-model corpora with ONNX graph rewriters (onnxslim, onnx-simplifier,
onnxoptimizer) and keep the rewritten models whose graphs really changed.

A test-corpus generator for onegraph's ONNX importer: users often run one of these
tools over an exporter's file before deploying it, and each one rewrites the graph in
its own way (constant folding, shape-subgraph elimination, Conv+BatchNorm and
MatMul+Add fusion, Gemm, consecutive Transpose / Squeeze / Slice merging, common
subexpression elimination, Identity removal, folding dims into Reshape...). The
sources are the models of tests/convert/data/{pytorch_exported, hf_exported,
timm_exported, tf2onnx_exported} (their index.json give inputs and input files):

* onnxslim: `onnxslim.slim(model)`, its default pipeline;
* onnxsim: `onnxsim.simplify(model, check_n=0)` (our own check follows);
* onnxoptimizer: `onnxoptimizer.optimize(model, get_fuse_and_elimination_passes())`.

Every rewritten model is checked (onnx.checker, full) and run in onnxruntime on the
source corpus's stored inputs (every input size it has); the oracle is onnxruntime on
the ORIGINAL model, which must agree within ORT_AGREES (relative to the value's size)
and exactly on integers. A rewrite that fails, fails the check, or changes the outputs
is a failure record; one whose op mix and node count did not change is only counted.
Of the rest, each tool keeps the models whose op mix moved most (ops added or removed,
then fewer nodes), smallest first, within a byte budget per tool, so the folder stays
under 4 MB. Files:

    OUT/<tool>__<pt|hf|timm|tf>__<source file stem>.onnx   the rewritten model
    OUT/<stem>.in<k>.npy [.alt.npy]            the source corpus's inputs, copied
    OUT/<stem>.out<k>.npy [.alt.npy]           onnxruntime's outputs on the original
    OUT/index.json  {"generator": versions, "models": {file: entry}, "failures": [...],
                     "sweep": counts per tool and corpus of the models changed, left
                     the same, failed, or skipped (onnxruntime cannot run the original:
                     bfloat16), and kept_in_corpus}: an entry gives the tool,
                     the source corpus and file, opset, ops before and after, node
                     counts, sizes, input/output names and files, and onnxruntime's
                     largest difference between the rewritten and the original model.

Run it (not by onegraph's tests) in its own venv, from the repository root:

    python3 -m venv /tmp/optvenv
    /tmp/optvenv/bin/pip install onnxslim==0.1.98 onnxsim==0.8.1 onnxoptimizer==0.4.2 \\
        onnx==1.23.2 onnxruntime==1.32.0 numpy
    /tmp/optvenv/bin/python tools/rewrite_corpus_models.py OUT_DIR

The corpus in tests/convert/data/rewritten/ was written this way. The tools are
deterministic on the same input, so a rerun writes the same files.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import onnx

from corpus_tool import compare_outputs, first_line, save_arrays  # tools/, this folder

warnings.filterwarnings("ignore")

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests",
                    "convert", "data")
CORPORA = ("pytorch_exported", "hf_exported", "timm_exported", "tf2onnx_exported")
TAGS = {"pytorch_exported": "pt", "hf_exported": "hf", "timm_exported": "timm",
        "tf2onnx_exported": "tf"}
TOOLS = ("onnxslim", "onnxsim", "onnxoptimizer")
BUDGET = 850_000       # bytes per tool (models, inputs and outputs)
MAX_MODEL = 150_000    # larger source models are swept, never kept
ORT_AGREES = 1e-4      # |rewritten - original| <= ORT_AGREES * (1 + |original|)
HALF_AGREES = 5e-3     # the same where a feed or the output is float16 (a few half ulps)


def _rewrite_worker(tool: str, jobs_file: str) -> int:
    """Child process: rewrite each (source, destination) pair of the JSON jobs file,
    printing START before and DONE after each, so that the parent can tell which model
    crashed the process (onnxsim's C++ code can segfault)."""
    with open(jobs_file, encoding="utf-8") as f:
        jobs = json.load(f)
    for src, dst in jobs:
        print("START", src, flush=True)
        try:
            onnx.save(rewrite(tool, onnx.load(src)), dst)
            print("DONE", src, flush=True)
        except Exception as e:  # noqa: BLE001 - the parent records the refusal
            print("ERROR", src, first_line(e).replace("\n", " "), flush=True)
    return 0


def rewrite_all(tool: str, sources: list, tmp: str) -> dict:
    """{source path: rewritten ModelProto or an error string}, each rewrite in a child
    process (restarted after a crash, the crash recorded against its model)."""
    results, todo = {}, list(sources)
    while todo:
        jobs = [(src, os.path.join(tmp, f"{k}.onnx")) for k, src in enumerate(todo)]
        jobs_file = os.path.join(tmp, "jobs.json")
        with open(jobs_file, "w", encoding="utf-8") as f:
            json.dump(jobs, f)
        done = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", tool,
                               jobs_file], capture_output=True, text=True)
        dst = dict(jobs)
        started = None
        for line in done.stdout.splitlines():
            word, _, rest = line.partition(" ")
            if word == "START":
                started = rest
            elif word == "DONE":
                results[rest] = onnx.load(dst[rest])
                started = None
            elif word == "ERROR":
                src, _, msg = rest.partition(" ")
                results[src] = f"{tool} fails: {msg}"
                started = None
        if started is not None:   # the child died inside this rewrite
            results[started] = f"{tool} crashes the process (exit code {done.returncode})"
        elif done.returncode != 0:
            raise RuntimeError(f"worker failed: {done.stderr[-2000:]}")
        todo = [s for s in todo if s not in results]
    return results


def rewrite(tool: str, model: onnx.ModelProto) -> onnx.ModelProto:
    """The model as `tool` rewrites it (default settings)."""
    if tool == "onnxslim":
        import onnxslim
        return onnxslim.slim(model)
    if tool == "onnxsim":
        import onnxsim
        out, _ = onnxsim.simplify(model, check_n=0)
        return out
    import onnxoptimizer
    return onnxoptimizer.optimize(model, onnxoptimizer.get_fuse_and_elimination_passes())


def _entries(corpus: str) -> dict:
    with open(os.path.join(DATA, corpus, "index.json"), encoding="utf-8") as f:
        index = json.load(f)
    index = index.get("models", index)
    return {k: v for k, v in sorted(index.items()) if k.endswith(".onnx") and "inputs" in v}


def _feed_sets(corpus: str, entry: dict) -> list:
    """[(feeds, [(file, new suffix)])] at each stored input size."""
    sets = [(entry["input_files"], "")]
    if entry.get("alt_input_files"):
        sets.append((entry["alt_input_files"], ".alt"))
    out = []
    for files, suffix in sets:
        feeds = {n: np.load(os.path.join(DATA, corpus, f), allow_pickle=False)
                 for n, f in zip(entry["inputs"], files)}
        out.append((feeds, suffix))
    return out


def _ops(model: onnx.ModelProto) -> collections.Counter:
    """Op type counts over the graph and its subgraphs (and local functions)."""
    count = collections.Counter()

    def walk(graph):
        for n in graph.node:
            count[(n.domain + ":" if n.domain not in ("", "ai.onnx") else "") + n.op_type] += 1
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                for g in a.graphs:
                    walk(g)
    walk(model.graph)
    for fn in model.functions:
        for n in fn.node:
            count[n.op_type] += 1
    return count


def _ort(model_bytes: bytes, feeds: dict, outputs: list) -> list:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    takes = {i.name for i in sess.get_inputs()}
    return sess.run(outputs, {k: v for k, v in feeds.items() if k in takes})


def sweep_one(tool, corpus, name, entry, new):
    """Check one rewritten corpus model (`new`: a ModelProto or the tool's error);
    ("same" | "kept" | "failed" | "skipped", record, payload)."""
    src = os.path.join(DATA, corpus, name)
    original = onnx.load(src)
    before = _ops(original)
    rec = dict(tool=tool, source_corpus=corpus, source_file=name,
               opset=next((o.version for o in original.opset_import
                           if o.domain in ("", "ai.onnx")), None))
    outputs = entry["outputs"]
    sets = _feed_sets(corpus, entry)
    try:
        wants = [_ort(original.SerializeToString(), feeds, outputs) for feeds, _ in sets]
    except Exception as e:  # noqa: BLE001 - e.g. bfloat16: no oracle, not swept
        return "skipped", dict(rec, error="onnxruntime cannot run the original: "
                               + first_line(e)), None
    if any(not isinstance(w, np.ndarray) for ws in wants for w in ws):
        return "skipped", dict(rec, error="a sequence or map output (ZipMap)"), None
    if isinstance(new, str):
        return "failed", dict(rec, error=new), None
    after = _ops(new)
    try:
        onnx.checker.check_model(new)
    except Exception as e:  # noqa: BLE001
        return "failed", dict(rec, error="the rewritten model fails the check: "
                              + first_line(e)), None
    try:
        onnx.checker.check_model(new, full_check=True)
    except Exception as e:  # noqa: BLE001 - kept if onnxruntime runs it right
        # e.g. value_info shapes that contradict ONNX's inference: importers meet these
        rec["full_check_error"] = first_line(e)
    if [o.name for o in new.graph.output] != outputs:
        return "failed", dict(rec, error="outputs renamed or dropped: "
                              f"{[o.name for o in new.graph.output]}"), None
    data = new.SerializeToString()
    err = 0.0
    for (feeds, suffix), want in zip(sets, wants):
        try:
            got = _ort(data, feeds, outputs)
        except Exception as e:  # noqa: BLE001
            return "failed", dict(rec, error=f"onnxruntime fails on the rewritten model "
                                  f"(input set{suffix or ' 0'}): " + first_line(e)), None
        half = any(v.dtype == np.float16 for v in feeds.values())
        e2, bad = compare_outputs(got, want, outputs, ORT_AGREES, HALF_AGREES, half)
        err = max(err, e2)
        if bad:
            return "failed", dict(rec, error="the rewritten model's outputs differ from the "
                                  f"original's (input set{suffix or ' 0'}): {bad}"), None
    if after == before:
        return "same", rec, None
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    rec.update(ops_before=sorted(before), ops_after=sorted(after),
               ops_added=added, ops_removed=removed,
               nodes_before=sum(before.values()), nodes_after=sum(after.values()),
               inputs=[i.name for i in new.graph.input if i.name in sets[0][0]],
               outputs=outputs, dynamic=bool(entry.get("alt_input_files")),
               ort_max_abs_err=err)
    return "kept", rec, (new, sets, wants)


def _score(rec) -> tuple:
    """Sort key: most op types added or removed, then most nodes saved, then smallest."""
    return (-(len(rec["ops_added"]) + len(rec["ops_removed"])),
            -(rec["nodes_before"] - rec["nodes_after"]), rec["size"])


def _pick_order(candidates: list) -> list:
    """The order in which the budget takes a tool's changed models: first those an
    importer rarely meets otherwise (value_info that contradicts ONNX's inference,
    float16 feeds), then one model per source family (bert, resnet, ...: the opset
    variants of one model change alike) by _score, then the rest by _score."""
    ranked = sorted(candidates, key=lambda c: _score(c[0]))
    odd = [c for c in ranked if c[0].get("full_check_error")
           or any(v.dtype == np.float16 for v in c[1][1][0][0].values())]
    order, families = [], set()
    for c in odd + ranked:
        family = (c[0]["source_corpus"], c[0]["source_file"].split("__")[0])
        if family not in families:
            families.add(family)
            order.append(c)
    return order + [c for c in ranked if not any(c is o for o in order)]



def _versions():
    from importlib.metadata import version
    return {p: version(p) for p in ("onnxslim", "onnxsim", "onnxoptimizer", "onnx",
                                    "onnxruntime", "numpy")}


def main(argv=None):
    """Sweep every tool over every corpus model, keep the most changed ones in OUT_DIR
    within the budget, and write index.json."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", nargs="?")
    ap.add_argument("--tools", nargs="*", default=list(TOOLS))
    ap.add_argument("--corpora", nargs="*", default=list(CORPORA),
                    help="other folders of tests/convert/data for a sweep")
    ap.add_argument("--budget", type=int, default=BUDGET,
                    help="bytes per tool (a large one keeps every changed model: a sweep)")
    ap.add_argument("--max-model", type=int, default=MAX_MODEL)
    ap.add_argument("--worker", nargs=2, metavar=("TOOL", "JOBS"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        return _rewrite_worker(*a.worker)
    os.makedirs(a.out_dir, exist_ok=True)
    models, failures = {}, []
    sweep = {t: collections.Counter() for t in a.tools}
    for tool in a.tools:
        candidates = []
        sources = [os.path.join(DATA, c, n) for c in a.corpora for n in _entries(c)]
        with tempfile.TemporaryDirectory() as tmp:
            rewritten = rewrite_all(tool, sources, tmp)
        for corpus in a.corpora:
            for name, entry in _entries(corpus).items():
                kind, rec, payload = sweep_one(tool, corpus, name, entry,
                                               rewritten[os.path.join(DATA, corpus, name)])
                sweep[tool][f"{corpus}:{'changed' if kind == 'kept' else kind}"] += 1
                if kind == "failed":
                    failures.append(rec)
                if kind != "kept":
                    print(f"{tool:<13} {corpus}/{name:<44} {kind} {rec.get('error', '')}"[:300],
                          flush=True)
                    continue
                rec["size"] = len(payload[0].SerializeToString())
                print(f"{tool:<13} {corpus}/{name:<44} kept? +{rec['ops_added']} "
                      f"-{rec['ops_removed']} nodes {rec['nodes_before']}->"
                      f"{rec['nodes_after']}", flush=True)
                if rec["size"] <= a.max_model:
                    candidates.append((rec, payload))
        used = 0
        for rec, (new, sets, wants) in _pick_order(candidates):
            # the corpus tag keeps apart files of the same name (vit__ts_op17_dyn is in
            # both the Hugging Face and the timm corpus)
            tag = TAGS.get(rec["source_corpus"], rec["source_corpus"])
            stem = f"{tool}__{tag}__{rec['source_file'][:-5]}"
            arrays = sum(v.nbytes for feeds, _ in sets for v in feeds.values()) + \
                sum(np.asarray(w).nbytes for ws in wants for w in ws)
            if used + rec["size"] + arrays > a.budget:
                continue
            used += rec["size"] + arrays
            onnx.save(new, os.path.join(a.out_dir, stem + ".onnx"))
            for (feeds, suffix), want in zip(sets, wants):
                key = "alt_" if suffix else ""
                rec[key + "input_files"] = save_arrays(a.out_dir, stem, "in",
                                                 [feeds[n] for n in rec["inputs"]], suffix)
                rec[key + "output_files"] = save_arrays(a.out_dir, stem, "out", want, suffix)
            sweep[tool]["kept_in_corpus"] += 1
            models[stem + ".onnx"] = rec
    index = dict(generator=_versions(), models=dict(sorted(models.items())),
                 failures=sorted(failures, key=lambda r: (r["tool"], r["source_corpus"],
                                                           r["source_file"])),
                 sweep={t: dict(sorted(c.items())) for t, c in sweep.items()})
    with open(os.path.join(a.out_dir, "index.json"), "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

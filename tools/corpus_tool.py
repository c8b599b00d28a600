"""Pieces the corpus generators (tools/export_*_models.py) share; each generator runs in
its own venv with its framework, so this module imports only the standard library (and
onnx where a function needs it)."""

from __future__ import annotations

import json
import os
import sys


def rerun_with_pinned_hash_seed(argv) -> None:
    """Re-execute this script with PYTHONHASHSEED=0 unless it already runs so (or is
    called as a function, argv given): skl2onnx orders opset_import by iterating a set
    of domain strings, and a pinned seed makes a rerun write the same bytes."""
    if argv is None and os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(sys.executable, [sys.executable] + sys.argv,
                  dict(os.environ, PYTHONHASHSEED="0"))


def kept_records(index_path: str, only) -> tuple[dict, list]:
    """(models, failures) of an existing index.json ({"models": ..., "failures": ...})
    other than the `only` names a partial rerun rewrites; empty for a full run."""
    if not only or not os.path.exists(index_path):
        return {}, []
    with open(index_path, encoding="utf-8") as f:
        old = json.load(f)
    models = {k: v for k, v in old["models"].items() if v["name"] not in only}
    failures = [r for r in old["failures"] if r["name"] not in only]
    return models, failures


def strip_dynamo_debug_info(path: str) -> None:
    """Drop the dynamo exporter's per-node debug records (metadata_props: stack traces,
    module scopes, FX node names) from the ONNX file at `path`: about half of a tiny
    model's bytes, and no runtime reads them."""
    import onnx

    model = onnx.load(path)
    for node in model.graph.node:
        del node.metadata_props[:]
    for fn in model.functions:
        for node in fn.node:
            del node.metadata_props[:]
    onnx.save(model, path)


def save_arrays(out_dir: str, stem: str, kind: str, arrays, suffix: str = "") -> list:
    """np.save each array as OUT_DIR/<stem>.<kind><k><suffix>.npy (kind 'in' or 'out',
    suffix '' or '.alt'), never pickled; the file names."""
    import numpy as np

    files = []
    for k, a in enumerate(arrays):
        name = f"{stem}.{kind}{k}{suffix}.npy"
        np.save(os.path.join(out_dir, name), np.asarray(a), allow_pickle=False)
        files.append(name)
    return files


def write_index(index_path: str, generator: dict, models: dict, failures: list) -> None:
    """index.json of a corpus: the generator's versions, the kept models by file name
    (sorted) and the failures (sorted by file), one space indented, newline-ended."""
    index = dict(generator=generator, models=dict(sorted(models.items())),
                 failures=sorted(failures, key=lambda r: r["file"]))
    with open(index_path, "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1)
        f.write("\n")


def first_line(e) -> str:
    """"Type: first line of the message" (at most 300 characters of it) of an
    exception, for an index's failure records."""
    msg = str(e).strip().splitlines()[0][:300] if str(e).strip() else ""
    return f"{type(e).__name__}: {msg}"


def compare_outputs(got: list, want: list, outputs: list, agrees: float,
                    half_agrees: float, half: bool = False) -> tuple:
    """(max abs difference, None) or (so far, what differs) for a rewritten or converted
    model's outputs against the original's: floats within `agrees` (`half_agrees` for
    float16, or when `half`) relative to 1 + |want|, everything else exactly."""
    import numpy as np

    err = 0.0
    for n, g, w in zip(outputs, got, want):
        g, w = np.asarray(g), np.asarray(w)
        limit = half_agrees if half or w.dtype == np.float16 else agrees
        if g.shape != w.shape or g.dtype != w.dtype:
            return err, f"{n}: {g.dtype}{list(g.shape)} != {w.dtype}{list(w.shape)}"
        if w.dtype.kind == "f":
            if np.any(np.isnan(g) != np.isnan(w)):
                return err, f"{n}: NaN at other places"
            if w.size:
                d = np.nan_to_num(np.abs(g.astype(np.float64) - w), nan=0.0)
                err = max(err, float(d.max()))
                worst = float((d / (1.0 + np.abs(np.nan_to_num(w.astype(np.float64))))).max())
                if worst > limit:
                    return err, f"{n}: max abs error {d.max():.3g} (relative {worst:.3g})"
        elif not np.array_equal(g, w):
            return err, f"{n}: {int(np.sum(g != w))} of {w.size} values differ"
    return err, None

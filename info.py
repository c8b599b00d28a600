"""Describe a model for people and scripts: what `onegraph info` prints.

`describe(model)` returns a JSON-ready dict; `format_text(description)` renders it.
"""

from __future__ import annotations

import collections
import math
from typing import Any, Mapping

from .format import DType, Model, TensorKind


def _shape_str(shape, dim_names=None) -> str:
    """`[?, 3]`; an unknown dim with a name shows the name: `[batch, 3]`."""
    if shape is None:
        return "?"
    names = dim_names if dim_names and len(dim_names) == len(shape) else ("",) * len(shape)
    return "[" + ", ".join((name or "?") if d < 0 else str(d)
                           for d, name in zip(shape, names)) + "]"


def _tensor_summary(t) -> dict[str, Any]:
    out = {"name": t.name, "dtype": t.dtype.short_name,
           "shape": None if t.shape is None else list(t.shape)}
    if t.containers:  # outermost first, e.g. ["optional", "sequence"]
        out["containers"] = [c.name.lower() for c in t.containers]
    if t.dim_names is not None:  # one per dim, "" for a dim without a name
        out["dim_names"] = list(t.dim_names)
    return out


def _json_float(x: float) -> float | str:
    """`x`, or "NaN" / "Infinity" / "-Infinity" for a non-finite value: JSON has no
    such numbers (json.dumps would print a bare NaN that strict parsers refuse), and
    these strings are what Python's float() and JavaScript's Number() read back."""
    if math.isfinite(x):
        return x
    return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")


def _type_str(t: dict) -> str:
    """`float32[?, 3]`, or wrapped in its containers: `sequence<float32[?, 3]>`,
    `sequence<map<int64, float32>>` (ZipMap's output)."""
    text = f"{t['dtype']}{_shape_str(t['shape'], t.get('dim_names'))}"
    for container in reversed(t.get("containers", ())):
        if container.startswith("map_"):
            text = f"map<{container[4:]}, {text}>"
        else:
            text = f"{container}<{text}>"
    return text


def describe(model: Model) -> dict[str, Any]:
    """Summarize a model: producer, version, signatures, ops, parameters, layout.

    The result has only JSON types and is strict JSON: non-finite floats (a NaN or
    infinite quantization scale) appear as the strings "NaN", "Infinity" and
    "-Infinity". `ops_without_kernel` lists op types the installed operator library
    cannot run.

    Raises:
        TypeError: model is not a `onegraph.format.Model` (load a file with og.load).
    """
    from .ops import REGISTRY

    if not isinstance(model, Model):
        kind = type(model)
        raise TypeError(f"describe: expected a onegraph Model, got "
                        f"{kind.__module__}.{kind.__qualname__} (load a .og file with "
                        "og.load)")
    graphs = model.all_graphs()
    histogram: collections.Counter = collections.Counter()
    devices: collections.Counter = collections.Counter()
    missing = set()
    for g in graphs:
        for node in g.nodes:
            key = f"{node.domain}::{node.op_type}" if node.domain not in ("", "ai.onnx") \
                else node.op_type
            histogram[key] += 1
            if node.device:
                devices[node.device] += 1
            if not REGISTRY.has(node.op_type, node.domain):
                missing.add(key)
    params = 0
    param_bytes = 0
    quantized = []
    variables = []
    for g in graphs:
        for t in g.tensors:
            if t.data is not None and t.dtype is not DType.STRING:
                params += int(t.data.size)
                param_bytes += int(t.data.nbytes)
            if t.quantization is not None:
                q = t.quantization
                quantized.append({**_tensor_summary(t),
                                  "scale": [_json_float(v) for v in q.scale.tolist()[:4]],
                                  "zero_point": q.zero_point.tolist()[:4],
                                  "axis": int(q.axis), "channels": int(len(q.scale))})
            if t.kind is TensorKind.VARIABLE:
                variables.append(_tensor_summary(t))
    signatures = {}
    for name, sig in sorted(model.signatures.items()):
        g = model.graphs[sig.graph]
        signatures[name] = {
            "inputs": {k: _tensor_summary(g.tensors[i]) for k, i in sig.inputs.items()},
            "outputs": {k: _tensor_summary(g.tensors[i]) for k, i in sig.outputs.items()},
            "targets": [g.nodes[n].name for n in sig.targets],
        }
    main = model.graphs[0] if model.graphs else None
    return {
        "path": model.path,
        "producer": model.producer,
        "schema_version": "%d.%d" % tuple(model.schema_version),
        "opset_imports": dict(sorted(model.opset_imports.items())),
        "metadata": dict(sorted(model.metadata.items())),
        "graphs": len(graphs),
        "nodes": sum(len(g.nodes) for g in graphs),
        # an input with a value (an ONNX initializer listed as a graph input) is fed
        # only to override it; "default" tells it from the inputs a run needs
        "inputs": [{**_tensor_summary(main.tensors[i]),
                    **({"default": True} if main.tensors[i].data is not None else {})}
                   for i in main.inputs] if main else [],
        "outputs": [_tensor_summary(main.tensors[i]) for i in main.outputs] if main else [],
        "signatures": signatures,
        "op_histogram": dict(sorted(histogram.items(), key=lambda kv: (-kv[1], kv[0]))),
        "ops_without_kernel": sorted(missing),
        "parameters": params,
        "parameter_bytes": param_bytes,
        "quantized_tensors": quantized,
        "variables": variables,
        "devices": dict(sorted(devices.items())),
        "layout": dict(model.file_info) if model.file_info else None,
    }


# What format_text reads from describe()'s result.
_DESCRIBE_KEYS = ("path", "producer", "schema_version", "opset_imports", "graphs", "nodes",
                  "inputs", "outputs", "signatures", "parameters", "parameter_bytes",
                  "variables", "quantized_tensors", "devices", "op_histogram",
                  "ops_without_kernel", "layout", "metadata")


def _human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)  # pragma: no cover


def format_text(d: dict[str, Any]) -> str:
    """Render `describe()` output as the human-readable `onegraph info` text.

    Raises:
        TypeError: `d` is not a mapping (`describe(model)` returns the one to give).
        ValueError: `d` lacks keys that `describe()` returns (they are listed).
    """
    if not isinstance(d, Mapping):
        raise TypeError(f"format_text: expected the dict describe(model) returns, got "
                        f"{type(d).__name__}")
    missing = [k for k in _DESCRIBE_KEYS if k not in d]
    if missing:
        raise ValueError(f"format_text: expected the dict describe(model) returns; it "
                         f"lacks {missing}")
    lines = []
    if d["path"]:
        lines.append(f"model: {d['path']}")
    opsets = ", ".join(f"{k or 'ai.onnx'}={v}" for k, v in d["opset_imports"].items())
    # an ONNX file (`onegraph info model.onnx`) is described as onegraph imports it
    kind = "format: ONNX" if d.get("format") == "onnx" else f"schema: {d['schema_version']}"
    lines.append(f"producer: {d['producer'] or '-'}   {kind}   opsets: {opsets or '-'}")
    lines.append(f"graphs: {d['graphs']}   nodes: {d['nodes']}")

    def io(items):
        return ", ".join(f"{t['name']}: {_type_str(t)}" for t in items)

    # as onnxruntime's get_inputs(): the inputs a run needs; those with a default
    # value (initializers listed as inputs, often dozens) are counted after them
    needed = [t for t in d["inputs"] if not t.get("default")]
    defaults = [t["name"] for t in d["inputs"] if t.get("default")]
    lines.append(f"inputs: {io(needed) or '-'}")
    if defaults:
        lines.append(f"inputs with a default value (initializers, fed only to override "
                     f"them): {len(defaults)} ({', '.join(defaults[:8])}"
                     f"{', ...' if len(defaults) > 8 else ''})")
    lines.append(f"outputs: {io(d['outputs']) or '-'}")
    if d["signatures"]:
        lines.append("signatures:")
        for name, sig in d["signatures"].items():
            ins = ", ".join(f"{k}={t['name']}:{_type_str(t)}"
                            for k, t in sig["inputs"].items())
            outs = ", ".join(f"{k}={t['name']}:{_type_str(t)}"
                             for k, t in sig["outputs"].items())
            lines.append(f"  {name}: ({ins}) -> ({outs})"
                         + (f" targets {sig['targets']}" if sig["targets"] else ""))
    lines.append(f"parameters: {d['parameters']:,} ({_human_bytes(d['parameter_bytes'])})")
    if d["variables"]:
        lines.append(f"variables: {len(d['variables'])} "
                     f"({', '.join(v['name'] for v in d['variables'][:8])}"
                     f"{', ...' if len(d['variables']) > 8 else ''})")
    if d["quantized_tensors"]:
        lines.append(f"quantized tensors: {len(d['quantized_tensors'])}")
    if d["devices"]:
        lines.append("devices: " + ", ".join(f"{k} ({v} ops)" for k, v in d["devices"].items()))
    lines.append("ops:")
    for op, count in d["op_histogram"].items():
        mark = "  (no kernel)" if op in d["ops_without_kernel"] else ""
        lines.append(f"  {count:6d}  {op}{mark}")
    total = len(d["op_histogram"])
    covered = total - len(d["ops_without_kernel"])
    lines.append(f"op coverage: {covered}/{total} op types have kernels")
    if d["layout"]:
        lay = d["layout"]
        lines.append(f"file: {_human_bytes(lay['file_size'])}; FlatBuffer "
                     f"{_human_bytes(lay['flatbuffer_size'])}, data tail "
                     f"{_human_bytes(lay['data_size'])} in {lay['num_buffers']} segments, "
                     f"{lay['alignment']}-byte aligned")
    if d["metadata"]:
        lines.append("metadata: " + ", ".join(f"{k}={v}" for k, v in d["metadata"].items()))
    return "\n".join(lines)


def verify_report(path: str) -> dict[str, Any]:
    """Load `path` with full checks (structure and every checksum); never raises for a
    bad file: returns {"path", "ok", "error", "error_type"} with the error message and
    its type's name when not ok. A file that cannot be opened is reported in the words
    of `og.load` and the CLI: error_type "FileNotFoundError", error "cannot read
    'PATH': No such file or directory".

    Raises:
        TypeError: path is not a str, bytes or os.PathLike.
        ValueError: path contains a NUL byte.
    """
    from . import load
    from .errors import FormatError
    from .format.atomic import cannot_read

    try:
        model = load(path, check_data=True)
        model.lint()
    except FormatError as e:
        return {"path": path, "ok": False, "error": str(e), "error_type": type(e).__name__}
    except OSError as e:  # the words of og.load and the CLI (format/atomic.py)
        error = cannot_read(e) if e.errno is not None else str(e)
        return {"path": path, "ok": False, "error": error, "error_type": type(e).__name__}
    return {"path": path, "ok": True, "error": None, "error_type": None}

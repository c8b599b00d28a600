"""The `onegraph convert` and `onegraph run` subcommands.

    onegraph convert in.onnx out.og          # import (direction from the extensions)
    onegraph convert in.og out.onnx [--opset N] [--no-check]
    onegraph run model.og --input x=x.npy [--input ...] [--output-dir DIR] [--signature S]
                 [--runs N] [--profile] [--trace FILE.json]

`run` needs only numpy (it does not import onnx); `convert` imports onnx lazily.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import ConversionError, OneGraphError


def cmd_convert(args) -> int:
    """Convert between .onnx and .og, choosing the direction from the file extensions.

    Raises:
        ConversionError: unknown extension pair or a failed conversion.
    """
    import onegraph as og

    src_ext = os.path.splitext(args.input)[1].lower()
    dst_ext = os.path.splitext(args.output)[1].lower()
    if src_ext == ".onnx" and dst_ext == ".og":
        from .onnx_import import from_onnx

        if args.opset is not None or args.no_check:
            flag = "--opset" if args.opset is not None else "--no-check"
            raise ConversionError(f"{flag} applies to export (.og -> .onnx) only")
        model = from_onnx(args.input)
        try:
            size = og.save(model, args.output)
        except OSError as e:  # the message would name the writer's temporary file
            raise ConversionError(f"cannot write {args.output}: {e.strerror or e}") from e
        print(f"{args.input} -> {args.output}: {len(model.graph.nodes)} nodes, "
              f"{size:,} bytes")
        return 0
    if src_ext == ".og" and dst_ext == ".onnx":
        from .onnx_export import to_onnx

        model = og.load(args.input)
        proto = to_onnx(model, args.output, opset=args.opset, check=not args.no_check)
        opset = next((o.version for o in proto.opset_import if o.domain == ""), "?")
        print(f"{args.input} -> {args.output}: {len(proto.graph.node)} nodes, opset {opset}")
        return 0
    raise ConversionError(f"cannot tell the direction from {src_ext or 'no extension'} -> "
                          f"{dst_ext or 'no extension'}; use .onnx -> .og or .og -> .onnx")


def _parse_inputs(items, known=()) -> dict[str, np.ndarray]:
    """{input name: array} from --input NAME=FILE.npy items.

    An item splits at its first "=", unless a later "=" ends one of the `known` input
    names and the first does not (an input named "a=b"; a path may hold "=" too).

    Raises:
        OneGraphError: an item is not NAME=FILE or names an input twice.
        FormatError: a file cannot be read or is not a plain .npy array.
    """
    from ..errors import FormatError
    from ..format.npy import load_npy

    feeds = {}
    for item in items or []:
        name, sep, path = item.partition("=")
        if name not in known:
            cuts = [k for k, ch in enumerate(item) if ch == "=" and item[:k] in known]
            if cuts:
                name, sep, path = item[:cuts[0]], "=", item[cuts[0] + 1:]
        if not sep or not name or not path:
            raise OneGraphError(f"--input {item!r}: expected NAME=file.npy")
        if name in feeds:
            raise OneGraphError(f"--input {name}: given more than once")
        try:
            feeds[name] = load_npy(path)
        except FormatError as e:
            raise FormatError(f"--input {name}: {e}") from None
    return feeds


def cmd_run(args) -> int:
    """Run a model's signature (default "serving") on .npy inputs with the Session.

    Writes NAME.npy per output into --output-dir, or prints a summary per output.
    --runs N repeats the run (the outputs are the last run's); --profile prints the
    per-node timings (`RunMetadata.summary`, medians over the runs) and --trace FILE
    writes them as a Chrome trace (`RunMetadata.write_trace`).

    Raises:
        OneGraphError: bad --input, unknown signature or input key, bad --runs or
            --trace folder, or a failed run.
    """
    import onegraph as og
    from ..train.session import Session

    model = og.load(args.model)
    sig = model.signatures.get(args.signature)
    known = set(sig.inputs) if sig is not None else \
        {model.graph.tensors[i].name for i in model.graph.inputs}
    feeds = _parse_inputs(args.input, known)
    # every argument is checked before anything is created or run
    if args.runs < 1:
        raise OneGraphError(f"--runs {args.runs}: must be at least 1")
    if args.trace is not None:
        if not args.trace or os.path.isdir(args.trace):
            raise OneGraphError(f"--trace {args.trace!r}: needs a file name, not a folder")
        if not os.path.isdir(os.path.dirname(os.path.abspath(args.trace))):
            raise OneGraphError(f"--trace {args.trace}: the folder does not exist")
    if args.output_dir is not None and not args.output_dir:
        raise OneGraphError("--output-dir '': needs a folder name")
    session = Session(model)
    if args.signature in model.signatures:
        names, fetches, feed_dict = session._signature_call(args.signature, feeds)
    elif args.signature == "serving" and not model.signatures:
        g = model.graph
        names = [g.tensors[i].name for i in g.outputs]
        fetches, feed_dict = names, feeds
    else:
        raise OneGraphError(f"no signature {args.signature!r} "
                            f"(available: {sorted(model.signatures)})")
    if not names:
        raise OneGraphError(f"{args.model}: the model has no outputs to fetch")
    stems = _file_stems(names) if args.output_dir else {}
    if args.output_dir:  # fail before running, not after
        try:
            os.makedirs(args.output_dir, exist_ok=True)
        except OSError as e:
            raise OneGraphError(f"--output-dir {args.output_dir}: cannot create the "
                                f"directory: {e.strerror or e}") from e
    meta = og.RunMetadata() if args.profile or args.trace else None
    for _ in range(args.runs):
        results = session.run(fetches, feed_dict, run_metadata=meta)
    outputs = dict(zip(names, results[:len(names)]))
    for name, value in outputs.items():
        if args.output_dir:
            for line in _write_output(name, value, os.path.join(args.output_dir,
                                                                stems[name])):
                print(line)
        else:
            print(_summary(name, value))
    if args.profile:
        print(meta.summary())
    if args.trace:
        meta.write_trace(args.trace)
        print(f"trace of {meta.runs} run(s) -> {args.trace}")
    return 0


# Longest file stem written for an output (file systems allow 255 bytes per name)
_MAX_STEM = 120


def _file_stems(names) -> dict[str, str]:
    """A distinct, safe file stem per output name: path separators, NUL and other
    control characters become '_', long names are cut (with a checksum of the whole
    name), and names that still collide get '_2', '_3', ... so no output overwrites
    another."""
    import zlib

    stems: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        safe = "".join("_" if c in "/\\" or c == os.sep or ord(c) < 32 else c
                       for c in name) or "output"
        if safe in (".", ".."):
            safe = safe.replace(".", "_")
        if len(safe.encode()) > _MAX_STEM:
            tag = f"{zlib.crc32(name.encode()):08x}"
            safe = safe.encode()[:_MAX_STEM - 9].decode(errors="ignore") + "_" + tag
        stem, k = safe, 2
        while stem.lower() in taken:  # case-insensitive file systems too
            stem, k = f"{safe}_{k}", k + 1
        taken.add(stem.lower())
        stems[name] = stem
    return stems


def _write_output(name: str, value, stem: str) -> list[str]:
    """Write one output under `stem` atomically and return the lines to print:
    a tensor as STEM.npy (strings as a fixed-width unicode array, which loads without
    pickle), a sequence as STEM_0.npy, STEM_1.npy, ..., a map as STEM.keys.npy and
    STEM.values.npy; an empty optional writes nothing.

    Raises:
        OneGraphError: the file cannot be written or the value has no .npy form.
    """
    from ..format.atomic import atomic_open

    if value is None:
        return [f"{name}: empty optional (no file)"]
    if isinstance(value, (list, tuple)):
        lines = [f"{name}: sequence of {len(value)}"]
        for i, item in enumerate(value):
            lines += _write_output(f"{name}[{i}]", item, f"{stem}_{i}")
        return lines
    if isinstance(value, dict):
        keys = np.asarray(list(value))
        vals = [np.asarray(v) for v in value.values()]
        lines = _write_output(f"{name} keys", keys, stem + ".keys")
        try:
            stacked = np.stack(vals) if vals else np.zeros(0, np.float32)
        except ValueError:
            raise OneGraphError(f"output {name!r}: a map whose values differ in shape has "
                                "no .npy form") from None
        return lines + _write_output(f"{name} values", stacked, stem + ".values")
    value = _npy_ready(name, np.asarray(value))
    path = stem + ".npy"
    try:
        with atomic_open(path) as f:
            np.save(f, value, allow_pickle=False)
    except OSError as e:
        raise OneGraphError(f"output {name!r}: cannot write {path}: {e.strerror or e}") \
            from None
    return [f"{name}: {value.dtype}{list(value.shape)} -> {path}"]


def _npy_ready(name: str, value: np.ndarray) -> np.ndarray:
    """value in a dtype .npy stores without pickle (strings as unicode).

    Raises:
        OneGraphError: an object array holding something other than strings.
    """
    if value.dtype != object:
        return value
    if all(isinstance(v, str) for v in value.flat):
        return value.astype(str) if value.size else value.astype("<U1")
    if all(isinstance(v, bytes) for v in value.flat):
        return value.astype(bytes) if value.size else value.astype("S1")
    raise OneGraphError(f"output {name!r}: object values have no .npy form without "
                        "pickle")


def _summary(name: str, value) -> str:
    if value is None:
        return f"{name}: empty optional"
    if isinstance(value, (list, tuple)):
        parts = [_summary(f"  [{i}]", v) for i, v in enumerate(value[:8])]
        more = ["  ..."] if len(value) > 8 else []
        return "\n".join([f"{name}: sequence of {len(value)}"] + parts + more)
    if isinstance(value, dict):
        shown = ", ".join(f"{k!r}: {np.asarray(v).tolist()!r}" for k, v in
                          list(value.items())[:8])
        return f"{name}: map of {len(value)} {{{shown}{', ...' if len(value) > 8 else ''}}}"
    value = np.asarray(value)
    head = f"{name}: {value.dtype}{list(value.shape)}"
    if value.dtype == object and value.size:
        flat = value.reshape(-1)
        return f"{head} values={[str(v) for v in flat[:8]]}{' ...' if flat.size > 8 else ''}"
    if value.size == 0 or value.dtype == object:
        return head
    if value.dtype.kind in "fiub":
        flat = value.reshape(-1)
        shown = np.array2string(flat[:8], precision=5, separator=", ")
        stats = ""
        if value.dtype.kind in "fiu":
            v = flat.astype(np.float64)
            stats = f" min={v.min():.6g} max={v.max():.6g} mean={v.mean():.6g}"
        return f"{head}{stats} values={shown}{' ...' if flat.size > 8 else ''}"
    return head


def register(sub) -> None:
    """Add the `convert` and `run` subcommands to an argparse subparsers object."""
    p = sub.add_parser("convert", help="convert .onnx <-> .og (direction from extensions)")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--opset", type=int, default=None,
                   help="target ONNX opset when exporting (.og -> .onnx)")
    p.add_argument("--no-check", action="store_true",
                   help="export without onnx.checker.check_model(full_check=True) "
                        "(to_onnx's check=False), e.g. for a model whose own ONNX "
                        "function bodies the checker refuses")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("run", help="run a .og model on .npy inputs")
    p.add_argument("model")
    p.add_argument("--input", action="append", metavar="NAME=FILE.npy",
                   help="an input value (repeatable)")
    p.add_argument("--output-dir", default=None,
                   help="write each output as NAME.npy here (default: print a summary)")
    p.add_argument("--signature", default="serving", help="signature to run")
    p.add_argument("--runs", type=int, default=1,
                   help="run this many times (outputs are the last run's)")
    p.add_argument("--profile", action="store_true",
                   help="print per-node kernel times, medians over the runs "
                        "(og.RunMetadata.summary)")
    p.add_argument("--trace", default=None, metavar="FILE.json",
                   help="write per-node times as a Chrome trace "
                        "(og.RunMetadata.write_trace)")
    p.set_defaults(func=cmd_run)

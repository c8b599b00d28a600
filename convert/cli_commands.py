"""The `onegraph convert` and `onegraph run` subcommands.

    onegraph convert in.onnx out.og          # import (direction from the extensions)
    onegraph convert in.og out.onnx [--opset N]
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

        if args.opset is not None:
            raise ConversionError("--opset applies to export (.og -> .onnx) only")
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
        proto = to_onnx(model, args.output, opset=args.opset)
        opset = next((o.version for o in proto.opset_import if o.domain == ""), "?")
        print(f"{args.input} -> {args.output}: {len(proto.graph.node)} nodes, opset {opset}")
        return 0
    raise ConversionError(f"cannot tell the direction from {src_ext or 'no extension'} -> "
                          f"{dst_ext or 'no extension'}; use .onnx -> .og or .og -> .onnx")


def _parse_inputs(items) -> dict[str, np.ndarray]:
    feeds = {}
    for item in items or []:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise OneGraphError(f"--input {item!r}: expected NAME=file.npy")
        if name in feeds:
            raise OneGraphError(f"--input {name}: given more than once")
        try:
            with open(path, "rb") as f:
                magic = f.read(6)
            if magic != b"\x93NUMPY":
                raise OneGraphError(f"--input {name}: {path} is not a .npy file "
                                    f"(starts with {magic!r}, expected b'\\x93NUMPY')")
            value = np.load(path, allow_pickle=False)
        except (ValueError, EOFError) as e:
            raise OneGraphError(f"--input {name}: {path} is not a plain .npy array "
                                f"({e})") from e
        except OSError as e:
            raise OneGraphError(f"--input {name}: cannot read {path}: "
                                f"{e.strerror or e}") from e
        feeds[name] = value
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
    feeds = _parse_inputs(args.input)
    if args.output_dir:  # fail before running, not after
        try:
            os.makedirs(args.output_dir, exist_ok=True)
        except OSError as e:
            raise OneGraphError(f"--output-dir {args.output_dir}: cannot create the "
                                f"directory: {e.strerror or e}") from e
    if args.runs < 1:
        raise OneGraphError(f"--runs {args.runs}: must be at least 1")
    if args.trace and not os.path.isdir(os.path.dirname(os.path.abspath(args.trace))):
        raise OneGraphError(f"--trace {args.trace}: the folder does not exist")
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
    meta = og.RunMetadata() if args.profile or args.trace else None
    for _ in range(args.runs):
        results = session.run(fetches, feed_dict, run_metadata=meta)
    outputs = dict(zip(names, results[:len(names)]))
    for name, value in outputs.items():
        value = np.asarray(value)
        if args.output_dir:
            safe = name.replace("/", "_").replace("\\", "_").replace(os.sep, "_") or "output"
            path = os.path.join(args.output_dir, safe + ".npy")
            np.save(path, value, allow_pickle=False)
            print(f"{name}: {value.dtype}{list(value.shape)} -> {path}")
        else:
            print(_summary(name, value))
    if args.profile:
        print(meta.summary())
    if args.trace:
        meta.write_trace(args.trace)
        print(f"trace of {meta.runs} run(s) -> {args.trace}")
    return 0


def _summary(name: str, value: np.ndarray) -> str:
    head = f"{name}: {value.dtype}{list(value.shape)}"
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

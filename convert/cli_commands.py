"""The `onegraph convert` and `onegraph run` subcommands.

    onegraph convert in.onnx out.og          # import (direction from the extensions)
    onegraph convert in.og out.onnx [--opset N] [--no-check]
    onegraph convert frozen.pb out.og [--outputs NAME,...]   # a TF1 frozen graph
    onegraph convert export_dir out.og [--signature S]       # a TF1 SavedModel dir
    onegraph run model.og --input x=x.npy [--input ...] [--output-dir DIR] [--signature S]
                 [--runs N] [--profile] [--trace FILE.json]

`run` needs only numpy (it does not import onnx); `convert` imports onnx lazily.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from ..cli import STDOUT_PATH, check_readable, check_writable_flag, refuse_overwriting
from ..errors import ConversionError, FormatError, OneGraphError
from ..format.atomic import cannot_write


def cmd_convert(args) -> int:
    """Convert between .onnx and .og (or a TF1 frozen graph .pb to .og), choosing the
    direction from the file extensions.

    Raises:
        ConversionError: unknown extension pair, --opset out of range, an unreadable
            .onnx file, an output that cannot be written (checked before converting)
            or a failed conversion.
        OneGraphError: the output is (a symbolic link to) the input.
        OSError: the .og file cannot be opened.
    """
    import onegraph as og

    src_ext = os.path.splitext(args.input)[1].lower()
    dst_ext = os.path.splitext(args.output)[1].lower()
    if args.outputs is not None and src_ext != ".pb":
        raise ConversionError("--outputs applies to TF frozen graphs (.pb -> .og) only")
    if os.path.isdir(args.input) and dst_ext == ".og" and (
            src_ext not in (".onnx", ".pb", ".og") or _holds_saved_model(args.input)):
        # (a directory named like a model file is refused as a file is: "Is a directory")
        return _convert_saved_model(args)
    if src_ext == ".onnx" and dst_ext == ".og":
        from .onnx_import import from_onnx

        if args.opset is not None or args.no_check or args.signature is not None:
            flag = "--opset" if args.opset is not None else \
                "--no-check" if args.no_check else "--signature"
            raise ConversionError(f"{flag} applies to export (.og -> .onnx) only")
        # from_onnx's own message repeats the path and the errno; say it as every
        # subcommand says it
        check_readable(args.input, ConversionError)
        _check_destination(args.input, args.output)
        model = from_onnx(args.input)
        try:
            size = og.save(model, args.output)
        except OSError as e:  # the message would name the writer's temporary file
            raise ConversionError(cannot_write(e, args.output)) from e
        print(f"{args.input} -> {args.output}: {len(model.graph.nodes)} nodes, "
              f"{size:,} bytes")
        return 0
    if src_ext == ".og" and dst_ext == ".onnx":
        import onnx

        from .onnx_export import to_onnx

        newest = onnx.defs.onnx_opset_version()
        if args.opset is not None and not 1 <= args.opset <= newest:
            # to_onnx checks this too, in the API's words ("opset"); here it is a flag
            raise ConversionError(f"--opset must be an integer from 1 to {newest} (the newest "
                                  f"the installed onnx knows), got {args.opset}")
        check_readable(args.input)
        _check_destination(args.input, args.output)
        # the data checksums too: a corrupted weight would otherwise go into a file
        # that has none, past detection
        model = og.load(args.input, check_data=True)
        proto = to_onnx(model, args.output, opset=args.opset, signature=args.signature,
                        check=not args.no_check)
        opset = next((o.version for o in proto.opset_import if o.domain == ""), "?")
        print(f"{args.input} -> {args.output}: {len(proto.graph.node)} nodes, opset {opset}")
        return 0
    if src_ext == ".pb" and dst_ext == ".og":
        return _convert_graph_def(args)
    raise ConversionError(f"cannot tell the direction from {src_ext or 'no extension'} -> "
                          f"{dst_ext or 'no extension'}; use .onnx -> .og, .og -> .onnx or "
                          f".pb (a TF1 frozen graph) -> .og")


def _convert_graph_def(args) -> int:
    """`onegraph convert frozen.pb model.og`: a TF1 frozen graph saved as a Model whose
    "serving" signature takes its placeholders and gives --outputs.

    Raises:
        ConversionError: a flag for ONNX export, an unreadable or corrupt .pb, an op
            without a mapping, an unknown output, an output that cannot be written.
    """
    import onegraph as og

    from .tf_graph_def import from_graph_def

    if args.opset is not None or args.no_check or args.signature is not None:
        raise ConversionError("--opset, --no-check and --signature apply to export "
                              "(.og -> .onnx) only")
    check_readable(args.input, ConversionError)
    _check_destination(args.input, args.output)
    outputs = None if args.outputs is None else [n for n in args.outputs.split(",") if n]
    model = from_graph_def(args.input, outputs)
    try:
        size = og.save(model, args.output)
    except OSError as e:
        raise ConversionError(cannot_write(e, args.output)) from e
    sig = model.signatures["serving"]
    print(f"{args.input} -> {args.output}: {len(model.graph.nodes)} nodes, serving "
          f"signature {sorted(sig.inputs)} -> {sorted(sig.outputs)}, {size:,} bytes")
    return 0


def _holds_saved_model(path: str) -> bool:
    from ..train.tf_saved_model import has_tf_saved_model

    return has_tf_saved_model(path)


def _convert_saved_model(args) -> int:
    """`onegraph convert export_dir model.og`: a TF1 SavedModel directory (TensorFlow's
    saved_model.pb, tags "serve") saved frozen as a Model whose signatures are its
    SignatureDefs (--signature: only that one).

    Raises:
        ConversionError: --opset/--no-check, no saved_model.pb, a TF2 SavedModel, no
            such signature, an op without a mapping, an output that cannot be written.
        RuntimeError: no meta graph tagged "serve".
        DataLossError: saved_model.pb or the checkpoint is corrupt.
    """
    import onegraph as og

    from ..train.tf_saved_model import PB_FILENAME, has_tf_saved_model
    from .tf_saved_model import from_saved_model

    if args.opset is not None or args.no_check:
        raise ConversionError("--opset and --no-check apply to export (.og -> .onnx) only")
    if not has_tf_saved_model(args.input):
        raise ConversionError(f"{args.input} is a directory without {PB_FILENAME} (not a "
                              "TF SavedModel)")
    _check_destination(args.input, args.output)
    model = from_saved_model(args.input, signature=args.signature)
    try:
        size = og.save(model, args.output)
    except OSError as e:
        raise ConversionError(cannot_write(e, args.output)) from e
    print(f"{args.input} -> {args.output}: {len(model.graph.nodes)} nodes, signatures "
          f"{sorted(model.signatures)}, {size:,} bytes")
    return 0


def _check_destination(source: str, output: str) -> None:
    """Fail before converting (which takes minutes for a large model) if `output` could
    not be written, or is `source` itself (a symbolic link to it: writing through the
    link would replace the model being converted).

    Raises:
        ConversionError: "cannot write 'OUTPUT': <reason>", as a failed write says it.
        OneGraphError: "output OUTPUT: is the model being converted; writing there
            would destroy it".
    """
    from ..format.atomic import check_writable

    refuse_overwriting("output", output, {"the model being converted": source})
    try:
        check_writable(output)
    except OSError as e:
        raise ConversionError(cannot_write(e, output)) from e


def _parse_inputs(items, known=()) -> dict[str, np.ndarray]:
    """{input name: array} from --input NAME=FILE.npy items.

    An item splits at its first "=", unless a later "=" ends one of the `known` input
    names and the first does not (an input named "a=b"; a path may hold "=" too).

    Raises:
        OneGraphError: an item is not NAME=FILE or names an input twice.
        FormatError: a file cannot be read or is not a plain .npy array.
    """
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
        check_readable(path, FormatError, f"--input {name}: ")
        try:
            feeds[name] = load_npy(path)
        except FormatError as e:
            raise FormatError(f"--input {name}: {_npz_hint(path) or e}") from None
    return feeds


def _npz_hint(path: str) -> str | None:
    """What to say of an .npz archive (numpy.savez) given where a .npy file goes, the
    arrays it holds named; None for any other file."""
    import zipfile

    try:
        # a regular file only: opening a named pipe again would wait for a writer
        if not os.path.isfile(path) or not zipfile.is_zipfile(path):
            return None
        with zipfile.ZipFile(path) as z:
            names = [n[:-len(".npy")] if n.endswith(".npy") else n for n in z.namelist()]
    except (OSError, zipfile.BadZipFile, ValueError):
        return None
    shown = ", ".join(repr(n) for n in names[:8]) + (", ..." if len(names) > 8 else "")
    return (f"{path} is not a .npy file but an .npz archive (of {shown}); save the "
            f"array for this input with numpy.save")


def cmd_run(args) -> int:
    """Run a model's signature (default "serving"; a model without signatures runs its
    graph's inputs and outputs) on .npy inputs with the Session.

    Writes each output into --output-dir (see `_write_output` for the file names), or
    prints a summary per output. --runs N repeats the run (the outputs are the last
    run's); --profile prints the timings per op type and the slowest nodes
    (`RunMetadata.summary`, medians over the runs) and --trace FILE writes them as a
    Chrome trace (`RunMetadata.write_trace`); a trace to the standard output
    (`--trace -`) is written alone there, the rest printed to stderr. Every argument,
    and every place that will be written, is checked before the model runs; the output
    files appear together after the run, or none of them does.

    Raises:
        OneGraphError: bad --input, unknown signature or input key, bad --runs, a
            --trace or --output-dir that cannot be written, or a failed run.
        FormatError: an --input file cannot be read or is not a plain .npy array.
        OSError: the model file cannot be opened.
    """
    import onegraph as og
    from ..train.session import Session, input_mismatch

    model = og.load(args.model, check_data=True)  # no run on weights that fail their CRC
    sig = model.signatures.get(args.signature)
    g = model.graph if sig is None else model.graphs[sig.graph]  # the signature's graph
    if sig is None and not (args.signature == "serving" and not model.signatures):
        raise OneGraphError(f"no signature {args.signature!r} "
                            f"(available: {sorted(model.signatures)})")
    # graph inputs with a default value (an ONNX initializer listed as an input) may be
    # fed by their names, as Session.run and onnxruntime allow
    defaults = {g.tensors[i].name for i in g.inputs if g.tensors[i].data is not None}
    if sig is not None:
        what = f"signature {args.signature!r}"
        needs = set(sig.inputs)
        # the model's order: its graph outputs' order (the file keeps signatures
        # sorted by key), then the rest in the order their tensors were made
        place = {t: k for k, t in enumerate(g.outputs)}
        outputs = sorted(sig.outputs, key=lambda k: (place.get(sig.outputs[k], len(place)),
                                                     sig.outputs[k], k))
        takes = needs | (defaults - {g.tensors[i].name for i in sig.inputs.values()})
        declared = {k: g.tensors[sig.outputs[k]] for k in outputs}
    else:  # no signatures: the graph's inputs (those without a value) and outputs
        what, takes = "the graph", {g.tensors[i].name for i in g.inputs}
        needs = {g.tensors[i].name for i in g.inputs if g.tensors[i].data is None}
        declared = {g.tensors[i].name: g.tensors[i] for i in g.outputs}
        outputs = list(declared)
    feeds = _parse_inputs(args.input, takes)
    inputs = {g.tensors[i].name: g.tensors[i] for i in g.inputs}
    if sig is not None:
        inputs.update((k, g.tensors[i]) for k, i in sig.inputs.items())
    feeds = _as_declared_inputs(feeds, inputs)
    problem = input_mismatch(what, takes, needs, feeds)
    if problem:  # the words Session.run_signature uses, for the flag
        raise OneGraphError(f"--input: {problem}")
    # every argument and every place written is checked before the model runs
    if args.runs < 1:
        raise OneGraphError(f"--runs {args.runs}: must be at least 1")
    reads = {"the model being run": args.model,
             **{f"the --input file of {item.partition('=')[0]!r}": item.partition("=")[2]
                for item in args.input or ()}}
    if args.trace is not None:
        # a trace next to the outputs, in an --output-dir still to be made: that
        # folder's check below is the trace's too
        if not (args.output_dir and not os.path.exists(args.output_dir)
                and _same_place(os.path.dirname(args.trace) or ".", args.output_dir)):
            check_writable_flag("--trace", args.trace)
        refuse_overwriting("--trace", args.trace, reads)
    if args.output_dir is not None:
        if not args.output_dir:
            raise OneGraphError("--output-dir '': needs a folder name")
        check_writable_flag("--output-dir", args.output_dir, folder=True)
        # an output's file whose place a folder holds (a sequence's elements, whose
        # count the run decides, are checked when they are written)
        stems = _file_stems({k: np.empty(0) for k in outputs})
        for k in outputs:
            path = os.path.join(args.output_dir, stems[k] + ".npy")
            if os.path.isdir(path):
                raise OneGraphError(f"--output-dir {args.output_dir}: cannot write "
                                    f"{path!r}: it is a directory")
            if not declared[k].containers:  # a plain tensor: STEM.npy is its file
                refuse_overwriting("--output-dir", path, reads)
                _refuse_trace_at(args.trace, path, k)
    if not outputs:
        raise OneGraphError(f"{args.model}: the model has no outputs to fetch")
    session = Session(model)
    if sig is not None:
        overrides = {k: v for k, v in feeds.items() if k not in sig.inputs}
        session, names, fetches, feed_dict = session._signature_call(
            args.signature, {k: v for k, v in feeds.items() if k in sig.inputs})
        feed_dict.update(overrides)
    else:
        names, fetches, feed_dict = outputs, outputs, feeds
    meta = og.RunMetadata() if args.profile or args.trace else None
    for _ in range(args.runs):
        results = session.run(fetches, feed_dict, run_metadata=meta)
    values = dict(zip(names, results[:len(names)]))
    values = {k: values[k] for k in outputs if k in values}
    if args.output_dir:
        stems = _file_stems(values)  # a sequence's or map's files are known only now
        for name, value in values.items():
            for f in _files_of(stems[name], value):
                _refuse_trace_at(args.trace, os.path.join(args.output_dir, f), name)
        lines = _write_outputs(args.output_dir, values, declared, reads)
    else:
        lines = [_summary(name, value) for name, value in values.items()]
    # `--trace -`: the standard output carries the trace's JSON alone (so it can be
    # piped or redirected into a .json file), and what would be printed goes to stderr
    report = sys.stderr if args.trace == STDOUT_PATH else sys.stdout
    print("\n".join(lines), file=report)
    if args.profile:
        print(meta.summary(), file=report)
    if args.trace:
        sys.stdout.flush()
        try:
            meta.write_trace(args.trace)
        except OSError as e:  # checked before the run; the file system changed since
            raise OneGraphError(f"--trace {args.trace}: cannot write there: "
                                f"{e.strerror or e}") from e
        print(f"trace of {meta.runs} run(s) -> {args.trace}", file=report)
    return 0


def _same_place(a: str, b: str) -> bool:
    """Whether the paths `a` and `b` name one file or folder, existing or not."""
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False


def _refuse_trace_at(trace: str | None, path: str, name: str) -> None:
    """Fail if the --trace file is `path`, where output `name` is written: one would
    replace the other.

    Raises:
        OneGraphError: "--trace PATH: is where --output-dir writes output 'NAME'".
    """
    if trace is not None and _same_place(trace, path):
        raise OneGraphError(f"--trace {trace}: is where --output-dir writes output "
                            f"{name!r}; give the trace another name")


def _write_outputs(folder: str, values: dict, declared: dict,
                   reads: dict | None = None) -> list[str]:
    """Write every output into `folder` (created, with missing parents, if need be) and
    return the lines to print. The files replace their old versions together: if one
    cannot be written, none is, and the folders made here are removed again.
    `reads` (what it is -> path) names the files the command read, which no output may
    replace.

    Raises:
        OneGraphError: a file or the folder cannot be written, is one of `reads`, or a
            value has no .npy form.
    """
    from ..format.atomic import AtomicFiles

    stems = _file_stems(values)
    # a sequence's or map's files are known only now; a plain tensor's were checked
    # before the run
    for name, value in values.items():
        for f in _files_of(stems[name], value):
            refuse_overwriting("--output-dir", os.path.join(folder, f), reads or {})
    made = []
    try:
        where = os.path.abspath(folder)
        while not os.path.exists(where):  # the folders makedirs is about to create
            made.insert(0, where)
            where = os.path.dirname(where)
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as e:
            raise OneGraphError(f"--output-dir {folder}: cannot create the directory: "
                                f"{e.strerror or e}") from e
        lines = []
        stale = _stale_files(folder, stems, values, declared)
        try:
            with AtomicFiles() as files:
                for name, value in values.items():
                    t = declared.get(name)
                    lines += _write_output(files, name, value, os.path.join(folder, stems[name]),
                                           t.dtype if t else None, t.containers if t else ())
        except OSError as e:  # atomic's errors name the output file, not a temp file
            raise OneGraphError(f"--output-dir {folder}: cannot write "
                                f"{e.filename or folder}: {e.strerror or e}") from e
        for path in stale:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            except OSError as e:
                raise OneGraphError(f"--output-dir {folder}: cannot remove the earlier run's "
                                    f"{path}: {e.strerror or e}") from e
        return lines
    except BaseException:
        for path in reversed(made):  # only the folders this run created (if empty)
            try:
                os.rmdir(path)
            except OSError:
                pass
        raise


def _stale_files(folder: str, stems: dict, values: dict, declared: dict) -> list[str]:
    """The files in `folder` an earlier run wrote for these outputs that this run does
    not write, so the folder then holds one run's outputs, not a mix of two: for an
    output declared a sequence, the elements past this run's last (STEM_2.npy, or a
    map element's STEM_2.keys.npy and STEM_2.values.npy, ..., while they go on in
    order); for one declared optional and now empty, its STEM.npy (or map files).
    Nothing this run writes, and no other file (a user's STEM_2024.npy next to a plain
    tensor), is taken."""
    import re

    from ..format import Container

    written = {f for name, value in values.items() for f in _files_of(stems[name], value)}
    try:
        entries = [e for e in os.listdir(folder) if e not in written
                   and os.path.isfile(os.path.join(folder, e))]
    except OSError:
        return []

    def files_of(prefix: str, nested: bool, among) -> list[str]:
        """What a value written under `prefix` left among the names `among`: a tensor,
        a map's two files, or (nested) a sequence's elements."""
        tail = r"(_\d+)*" if nested else ""
        pattern = re.compile(re.escape(prefix) + tail + r"(\.keys|\.values)?\.npy")
        return [e for e in among if pattern.fullmatch(e)]

    stale = []
    for name, value in values.items():
        t = declared.get(name)
        containers = tuple(t.containers) if t is not None else ()
        stem = stems[name]
        optional = containers[:1] == (Container.OPTIONAL,)
        if optional:
            containers = containers[1:]
        if containers[:1] == (Container.SEQUENCE,):
            k = len(value) if isinstance(value, (list, tuple)) else 0
            while True:
                nested = len(containers) > 1
                found = files_of(f"{stem}_{k}", nested, entries)
                # an element's name another output of this run took (an output named
                # y_1 next to a sequence y) does not end the earlier run's elements
                if not found and not files_of(f"{stem}_{k}", nested, written):
                    break
                stale += found
                k += 1
        elif optional and value is None:
            stale += files_of(stem, False, entries)
    return [os.path.join(folder, e) for e in dict.fromkeys(stale)]


# Longest file stem written for an output (file systems allow 255 bytes per name)
_MAX_STEM = 120


def _file_stems(values: dict) -> dict[str, str]:
    """A distinct, safe file stem per output (name -> value): path separators, NUL and
    other control characters become '_', long names are cut (with a checksum of the
    whole name), and an output whose stem or files (a sequence's STEM_0.npy, ..., a
    map's STEM.keys.npy) would meet another's gets '_2', '_3', ... so no output
    overwrites another."""
    import zlib

    stems: dict[str, str] = {}
    taken: set[str] = set()  # stems and file names given out, lower case
    for name, value in values.items():
        safe = "".join("_" if c in "/\\" or c == os.sep or ord(c) < 32 else c
                       for c in name) or "output"
        if safe in (".", ".."):
            safe = safe.replace(".", "_")
        if len(safe.encode()) > _MAX_STEM:
            tag = f"{zlib.crc32(name.encode()):08x}"
            safe = safe.encode()[:_MAX_STEM - 9].decode(errors="ignore") + "_" + tag
        stem, k = safe, 2
        # case-insensitive file systems too
        while stem.lower() in taken or taken & {f.lower() for f in _files_of(stem, value)}:
            stem, k = f"{safe}_{k}", k + 1
        taken.add(stem.lower())
        taken.update(f.lower() for f in _files_of(stem, value))
        stems[name] = stem
    return stems


def _files_of(stem: str, value) -> list[str]:
    """The file names `_write_output` gives `value` under `stem`."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [f for i, item in enumerate(value) for f in _files_of(f"{stem}_{i}", item)]
    if isinstance(value, dict):
        return [stem + ".keys.npy", stem + ".values.npy"]
    return [stem + ".npy"]


def _write_output(files, name: str, value, stem: str, dtype=None,
                  containers: tuple = ()) -> list[str]:
    """Write one output under `stem` into `files` (a `format.atomic.AtomicFiles`) and
    return the lines to print: a tensor as STEM.npy (strings as a fixed-width unicode
    array, which loads without pickle), a sequence as STEM_0.npy, STEM_1.npy, ..., a
    map as STEM.keys.npy and STEM.values.npy; an empty optional writes nothing.

    `dtype` and `containers` are the output's declared type (the model tensor's): a
    value that carries no dtype of its own (a map's Python keys and floats) is written
    as declared, so a map declared int64 -> float gives int64 keys and float32 values.

    Raises:
        OneGraphError: the value has no .npy form.
        OSError: a file cannot be written (naming it).
    """
    from ..format import Container

    if containers and containers[0] is Container.OPTIONAL:
        containers = containers[1:]
    if value is None:
        return [f"{name}: empty optional (no file)"]
    if isinstance(value, (list, tuple)):
        inner = containers[1:] if containers[:1] == (Container.SEQUENCE,) else ()
        lines = [f"{name}: sequence of {len(value)}"]
        for i, item in enumerate(value):
            lines += _write_output(files, f"{name}[{i}]", item, f"{stem}_{i}", dtype, inner)
        return lines
    if isinstance(value, dict):
        key_type = {Container.MAP_INT64: np.int64, Container.MAP_STRING: str}.get(
            containers[0] if containers else None)
        inner = containers[1:] if key_type is not None else ()
        keys = np.asarray(list(value), dtype=key_type)
        vals = [_as_declared(v, dtype, inner) for v in value.values()]
        lines = _write_output(files, f"{name} keys", keys, stem + ".keys")
        try:
            stacked = np.stack(vals) if vals else \
                np.zeros(0, _declared_numpy(dtype, inner) or np.float32)
        except ValueError:
            raise OneGraphError(f"output {name!r}: a map whose values differ in shape has "
                                "no .npy form") from None
        return lines + _write_output(files, f"{name} values", stacked, stem + ".values")
    value = _npy_ready(name, _as_declared(value, dtype, containers))
    path = stem + ".npy"
    wide = _npy_widened(value.dtype)
    with files.open(path) as f:
        np.save(f, value if wide is None else value.astype(wide), allow_pickle=False)
    note = "" if wide is None else f" (as {np.dtype(wide)}, exactly)"
    return [f"{name}: {value.dtype}{list(value.shape)} -> {path}{note}"]


def _npy_widened(dtype: np.dtype):
    """The numpy type an ml_dtypes value (bfloat16, the float8/float4 and int4/int2
    types) is written to .npy as, or None for a type numpy has itself: np.save writes
    ml_dtypes arrays as raw bytes ('|V2') or with a descriptor np.load refuses
    (float8_e5m2's '<f1'). Every such value is exact in the wider type."""
    if not dtype.type.__module__.startswith("ml_dtypes"):
        return None
    if "int" in dtype.name:  # int4, uint4, int2, uint2
        return np.uint8 if dtype.name.startswith("uint") else np.int8
    return np.float32


def _as_declared_inputs(feeds: dict, declared: dict) -> dict:
    """`feeds` with the raw bytes np.save writes for an ml_dtypes array (bfloat16,
    float8, int4, ...: '|V2', '|V1') viewed as the type of the input they are fed to.
    Numbers (what `run --output-dir` writes for such an output) are left to the
    Session, which casts them as every feed is cast (see `Session.run`)."""
    out = dict(feeds)
    for name, value in feeds.items():
        t = declared.get(name)
        if t is None or t.containers:
            continue
        try:
            target = np.dtype(t.dtype.numpy)
        except (FormatError, TypeError):
            continue
        if _npy_widened(target) is not None and value.dtype.kind == "V" \
                and value.dtype.itemsize == target.itemsize and value.dtype.fields is None:
            out[name] = value.view(target)
    return out


def _declared_numpy(dtype, containers: tuple = ()):
    """The numpy dtype of a declared tensor type, or None when there is none to use
    (unknown, strings, a container, or no numpy equivalent)."""
    from ..format import DType

    if dtype is None or containers or dtype in (DType.UNDEFINED, DType.STRING):
        return None
    try:
        return dtype.numpy
    except FormatError:
        return None


def _as_declared(value, dtype, containers: tuple = ()) -> np.ndarray:
    """`value` as an array: arrays and numpy scalars keep their dtype, Python values
    (whose dtype numpy would guess, float64 for a float) get the declared one."""
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value)
    return np.asarray(value, dtype=_declared_numpy(dtype, containers))


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
    wide = _npy_widened(value.dtype)
    if wide is not None:  # bfloat16 and the like: shown by value as numbers
        value = value.astype(wide)
    if value.dtype == object and value.size:
        flat = value.reshape(-1)
        return f"{head} values={[str(v) for v in flat[:8]]}{' ...' if flat.size > 8 else ''}"
    if value.size == 0 or value.dtype == object:
        return head
    if value.dtype.kind in "fiub":
        flat = value.reshape(-1)
        # one line per output, however wide (numpy wraps at 75 columns)
        shown = np.array2string(flat[:8], precision=5, separator=", ",
                                max_line_width=sys.maxsize)
        stats = ""
        if value.dtype.kind in "iu":  # ids and counts exactly, not as 1.09951e+12
            mean = flat.astype(np.float64).mean()
            stats = f" min={int(flat.min())} max={int(flat.max())} mean={mean:.6g}"
        elif value.dtype.kind == "f":
            v = flat.astype(np.float64)
            stats = f" min={v.min():.6g} max={v.max():.6g} mean={v.mean():.6g}"
        return f"{head}{stats} values={shown}{' ...' if flat.size > 8 else ''}"
    return head


def register(sub) -> None:
    """Add the `convert` and `run` subcommands to an argparse subparsers object."""
    p = sub.add_parser("convert", help="convert .onnx <-> .og, or a TF1 frozen graph .pb to "
                                       ".og (direction from extensions)")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--outputs", default=None, metavar="NAME[,NAME...]",
                   help="for a TF frozen graph (.pb -> .og): the nodes (or node:i tensors) "
                        "the serving signature gives; default: the nodes nothing reads")
    p.add_argument("--opset", type=int, default=None,
                   help="target ONNX opset when exporting (.og -> .onnx), 13 or newer "
                        "(older targets refuse every op that changed since); default: "
                        "the model's recorded opset")
    p.add_argument("--no-check", action="store_true",
                   help="export without onnx.checker.check_model(full_check=True) "
                        "(to_onnx's check=False), e.g. for a model whose own ONNX "
                        "function bodies the checker refuses, or to keep onnxruntime's "
                        "SimplifiedLayerNormalization as it came rather than in ONNX's "
                        "ops")
    p.add_argument("--signature", default=None, metavar="NAME",
                   help="the signature to export (.og -> .onnx; to_onnx's signature=): "
                        "its inputs and outputs become the ONNX model's, named by its "
                        "keys; default: 'serving', or the model's only signature; "
                        "for a TF SavedModel directory -> .og, the one SignatureDef to "
                        "convert (default: all)")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("run", help="run a .og model on .npy inputs")
    p.add_argument("model")
    p.add_argument("--input", action="append", metavar="NAME=FILE.npy",
                   help="an input value, repeatable; NAME is the signature's input key "
                        "(for a model without signatures, the graph input's name), or "
                        "the name of a graph input with a default value (an ONNX "
                        "initializer listed as an input), to override it; the "
                        "array is cast to the input's dtype as Session.run casts feeds "
                        "(ints to floats, float64 to float32; never floats to ints)")
    p.add_argument("--output-dir", default=None, metavar="DIR",
                   help="write the outputs into DIR (created if missing), each named "
                        "after its signature key (its graph output name without "
                        "signatures) with '/', '\\' and control characters made '_' (names that "
                        "then collide get _2, _3, ...): a tensor as NAME.npy, a sequence "
                        "as NAME_0.npy, NAME_1.npy, ..., a map as NAME.keys.npy and "
                        "NAME.values.npy; bfloat16, float8, float4 and int4 values as "
                        "float32 or int8, exactly (default: print a summary of each "
                        "output)")
    p.add_argument("--signature", default="serving",
                   help="signature to run (default: %(default)s; a model without "
                        "signatures runs its graph's inputs and outputs)")
    p.add_argument("--runs", type=int, default=1,
                   help="run this many times (outputs are the last run's; default: "
                        "%(default)s)")
    p.add_argument("--profile", action="store_true",
                   help="print the time per op type and the slowest nodes, medians over "
                        "the runs (og.RunMetadata.summary)")
    p.add_argument("--trace", default=None, metavar="FILE.json",
                   help="write per-node times as a Chrome trace "
                        "(og.RunMetadata.write_trace); - writes it to the standard "
                        "output, and what run prints goes to the standard error")
    p.set_defaults(func=cmd_run)

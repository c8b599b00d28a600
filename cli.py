"""The `onegraph` command line: the same operations as the Python API, same words.

    onegraph info model.og | model.onnx | frozen.pb [--json]
    onegraph verify model.og [--json]
    onegraph convert in.onnx out.og | in.og out.onnx [--opset N] [--no-check]
    onegraph convert frozen.pb out.og [--outputs NAME,...]
                     [--signature NAME]
    onegraph run model.og --input NAME=file.npy ... [--output-dir DIR] [--signature S]
                 [--runs N] [--profile] [--trace FILE.json]
    onegraph train model.og --data train.npz --steps N [--batch-size N]
                   [--checkpoint-dir DIR] [--checkpoint-every N] [--output FILE.og]
                   [--seed N] [--plot FILE.png] [--quiet]

Exit status: 0 on success, 2 for a bad argument or input (one line on stderr naming
the error type), 1 when `verify` finds the file invalid. A command line argparse
refuses (a missing or unknown argument) also exits 2 with one line, in argparse's
words: "onegraph run: error: the following arguments are required: model (see
'onegraph run --help')".

`-` for a model, an --input file or --data reads the standard input (one of them at
most); `--trace -` writes the trace to the standard output, alone (what `run` prints
goes to the standard error then), so it can be redirected into a .json file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading

from .errors import OneGraphError


# Shared by the subcommands (convert/ and train/ import them), so that every one
# words a file it cannot read or write the same way.

def cannot_read(e: OSError) -> str:
    """The one wording every subcommand gives a file it cannot open:
    "cannot read 'PATH': No such file or directory" (no errno, the path once); the
    Python API's words too (`onegraph.format.atomic`)."""
    from .format.atomic import cannot_read as words

    return words(e)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, with a refused command line reported on one line like every
    other error (exit status 2, as argparse's): "onegraph run: error: MESSAGE (see
    'onegraph run --help')"; -h/--help prints the full usage as before."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def check_readable(path: str, error_type: type[Exception] | None = None,
                   prefix: str = "") -> None:
    """Fail now if `path` cannot be opened for reading (missing, a folder, no permission).

    Args:
        path: the file a subcommand is about to read.
        error_type: raise this type with `prefix` + `cannot_read(...)` as its message
            (the type the API that reads the file raises); None re-raises the OSError.
        prefix: put before the message, e.g. "--input x: ".

    Raises:
        OSError: the file cannot be opened (naming `path`) and error_type is None.
        error_type: the file cannot be opened and error_type is given.
    """
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        if error_type is None:
            raise
        raise error_type(prefix + cannot_read(e)) from None


def check_writable_flag(flag: str, path: str, folder: bool = False) -> None:
    """Fail now, naming `flag`, if the file `path` (with folder=True: files inside the
    folder `path`, created if missing) could not be written later; creates nothing.

    Raises:
        OneGraphError: "FLAG PATH: cannot write there: <reason>" (for a folder:
            "cannot create files there").
    """
    from .format.atomic import check_writable as check

    try:
        check(path, folder=folder)
    except OSError as e:
        what = "cannot create files there" if folder else "cannot write there"
        raise OneGraphError(f"{flag} {path}: {what}: {e.strerror or e}") from e


def refuse_overwriting(flag: str, path: str | None, reads: dict) -> None:
    """Fail now if the output `path` given with `flag` is one of the files the command
    reads (`reads`: what it is -> path), which writing it would destroy.

    Raises:
        OneGraphError: "FLAG PATH: is WHAT; writing there would destroy it".
    """
    if not path:
        return
    for what, source in reads.items():
        try:
            same = source is not None and os.path.samefile(path, source)
        except (OSError, ValueError):  # the output does not exist yet, and so on
            continue
        if same:
            raise OneGraphError(f"{flag} {path}: is {what}; writing there would destroy it")


_CONTROL = {c: f"\\x{c:02x}" for c in list(range(0x20)) + [0x7f] if c != 0x09}


def printable(text: str) -> str:
    """`text` with control characters (newlines, terminal escapes) shown as \\xNN, so
    names and paths taken from files keep a message on one line and cannot drive the
    terminal."""
    return text.translate(_CONTROL)


def _printable_strings(value):
    """`value` (nested dicts, lists, tuples) with every str passed through `printable`."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {_printable_strings(k): _printable_strings(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_printable_strings(v) for v in value)
    return value


def _cmd_info(args) -> int:
    from . import load
    from .info import describe, format_text

    if _is_onnx_path(args.model):
        # what a conversion would give, in memory: ops without kernels are listed
        # rather than refused, and nothing is written
        from .convert import from_onnx

        check_readable(args.model)
        model = from_onnx(args.model, check_ops=False)
        d = describe(model)
        d["path"] = args.model
        d["format"] = "onnx"
        d["schema_version"] = None  # the .og schema: none here
        producer = " ".join(model.metadata.get(k, "") for k in ("onnx.producer_name",
                                                                 "onnx.producer_version"))
        d["producer"] = producer.strip() or None
    elif isinstance(args.model, str) and args.model.lower().endswith(".pb"):
        # a TF1 frozen graph: what `onegraph convert frozen.pb m.og` would give (ops
        # without a mapping are named in the error)
        from .convert import from_graph_def

        check_readable(args.model)
        d = describe(from_graph_def(args.model))
        d.update(path=args.model, format="tf-graphdef", schema_version=None)
    else:
        d = describe(load(args.model))
    print(json.dumps(d, indent=2) if args.json else format_text(_printable_strings(d)))
    return 0


def _is_onnx_path(model) -> bool:
    """Whether a command's model argument names an ONNX file (by its extension, as
    `onegraph convert` tells the direction)."""
    return isinstance(model, str) and model.lower().endswith(".onnx")


def _cmd_verify(args) -> int:
    from .info import verify_report

    # a file that cannot be opened is a usage error (exit 2), like in every other
    # subcommand; exit 1 says the file is there and invalid
    check_readable(args.model)
    report = verify_report(args.model)
    if args.json:
        print(json.dumps(report, indent=2))
    elif report["ok"]:
        print(f"{args.model}: OK (structure and data checksums verified)")
    else:
        print(f"{args.model}: INVALID: {report['error_type']}: {report['error']}")
    return 0 if report["ok"] else 1


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    from . import __version__

    parser = _Parser(prog="onegraph", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"onegraph {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("info", help="summarize a .og model (signatures, ops, parameters, "
                                    "layout); given a .onnx file (or a TF1 frozen graph "
                                    ".pb), what converting it would give, ops without "
                                    "kernels listed")
    p.add_argument("model", help=".og file, .onnx (needs the onnx extra) or a TF1 frozen "
                                 "graph .pb")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.set_defaults(func=_cmd_info)

    p = sub.add_parser("verify", help="check a .og file's structure and data checksums "
                                      "(exit status 1 if it is invalid)")
    p.add_argument("model")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.set_defaults(func=_cmd_verify)

    from .convert.cli_commands import register as register_convert

    register_convert(sub)
    from .train.cli_commands import register as register_train

    register_train(sub)
    parser.subcommands = sub.choices  # name -> its parser, for main's errors
    return parser


def _terminated(signum, frame):
    """SIGTERM (how systemd, docker and kill stop a process) as SystemExit, so that a
    write in progress removes its temp file on the way out instead of leaving it."""
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def _sigterm_exits():
    """Within the block, SIGTERM raises SystemExit in the main thread (unless someone
    already handles SIGTERM); the previous handler is restored after."""
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


class _StdoutError(Exception):
    """Writing the standard output failed (a full disk, /dev/full), as opposed to a
    file the command reads, which is what the other OSErrors reaching `main` are."""


class _CheckedStdout:
    """sys.stdout for the length of a command, its write failures raised as
    `_StdoutError` (a closed pipe stays a BrokenPipeError, which `main` handles)."""

    def __init__(self, inner):
        self._inner = inner

    def _call(self, method, *args):
        try:
            return getattr(self._inner, method)(*args)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise _StdoutError(e) from None

    def write(self, text):
        return self._call("write", text)

    def flush(self):
        return self._call("flush")

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _silence_stdout() -> None:
    """Send what is left in the standard output to /dev/null, so the interpreter's
    own flush at exit does not fail (and print a traceback) again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


# What `--trace -` becomes: the trace file is the standard output.
STDOUT_PATH = "/dev/stdout"


def _dash_means_stdin(args) -> str | None:
    """Read `-` as the standard input (a model, an --input file, --data) and, for
    --trace, the standard output, as command-line tools do; returns what is wrong when
    `-` is given for two inputs (they cannot both read it), else None."""
    dashes = []
    for attr in ("model", "data"):
        if getattr(args, attr, None) == "-":
            setattr(args, attr, "/dev/stdin")
            dashes.append(attr if attr == "model" else "--data")
    items = getattr(args, "input", None)
    if items:
        for k, item in enumerate(items):
            name, sep, path = item.partition("=")
            if sep and path == "-":
                items[k] = f"{name}=/dev/stdin"
                dashes.append(f"--input {name}")
    if getattr(args, "trace", None) == "-":
        args.trace = STDOUT_PATH
    if len(dashes) > 1:
        return (f"{' and '.join(dashes)} are {'both' if len(dashes) == 2 else 'all'} '-': "
                "only one of them can read the standard input")
    return None


def main(argv=None) -> int:
    """Entry point of the `onegraph` console script; returns the exit status."""
    try:
        # loading the subcommands takes about a second of imports, in which a Ctrl-C
        # is as likely as during the work
        parser = build_parser()
        args, extra = parser.parse_known_args(argv)
        if extra:  # in the subcommand's words and pointing to its --help, as argparse
            # does for every other error in a subcommand's arguments
            parser.subcommands[args.command].error(
                f"unrecognized arguments: {' '.join(extra)}")
    except KeyboardInterrupt:
        print("onegraph: interrupted", file=sys.stderr)
        return 130
    problem = _dash_means_stdin(args)
    if problem:
        print(f"onegraph {args.command}: OneGraphError: {problem}", file=sys.stderr)
        return 2
    stdout = sys.stdout
    sys.stdout = _CheckedStdout(stdout)
    try:
        with _sigterm_exits():
            code = args.func(args)
            sys.stdout.flush()  # what the command printed must reach its destination
            return code
    except _StdoutError as e:
        cause = e.args[0]
        print(f"onegraph {args.command}: OSError: cannot write the standard output: "
              f"{cause.strerror or cause}", file=sys.stderr)
        sys.stdout = stdout
        _silence_stdout()
        return 2
    except OneGraphError as e:
        hint, text = "", str(e)
        model = getattr(args, "model", None)
        if type(e).__name__ == "FormatError" and _is_onnx_path(model) \
                and args.command not in ("convert", "info"):
            import shlex

            from .format.reader import ONNX_HINT

            text = text.split(ONNX_HINT)[0]  # the reader's hint, said better below
            stem = model[:-len(".onnx")]
            hint = (f" (an ONNX model: convert it first, `onegraph convert "
                    f"{shlex.quote(model)} {shlex.quote(stem + '.og')}`)")
        print(f"onegraph {args.command}: {type(e).__name__}: {printable(text + hint)}",
              file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:  # Ctrl-C: the writers left no partial file behind
        print(f"onegraph {args.command}: interrupted", file=sys.stderr)
        return 130
    except OSError as e:
        # a model file that cannot be opened (missing, a folder, no permission): the
        # subcommands turn every failed write into a OneGraphError naming its flag, so
        # what reaches here is a read
        from .format.atomic import is_worded

        if is_worded(e):  # og.load / og.save already worded it, verb included
            what = str(e)
        else:
            what = cannot_read(e) if e.filename is not None and e.filename2 is None \
                else e.strerror or str(e)
        print(f"onegraph {args.command}: {type(e).__name__}: {printable(what)}",
              file=sys.stderr)
        return 2
    finally:
        if isinstance(sys.stdout, _CheckedStdout):
            sys.stdout = stdout


if __name__ == "__main__":
    sys.exit(main())

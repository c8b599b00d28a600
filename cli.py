"""The `onegraph` command line: the same operations as the Python API, same words.

    onegraph info model.og [--json]
    onegraph verify model.og [--json]
    onegraph convert in.onnx out.og | in.og out.onnx [--opset N] [--no-check]
    onegraph run model.og --input NAME=file.npy ... [--output-dir DIR]
                 [--runs N] [--profile] [--trace FILE.json]
"""

from __future__ import annotations

import argparse
import json
import sys

from .errors import OneGraphError


def _cmd_info(args) -> int:
    from . import load
    from .info import describe, format_text

    model = load(args.model)
    d = describe(model)
    print(json.dumps(d, indent=2) if args.json else format_text(d))
    return 0


def _cmd_verify(args) -> int:
    from .info import verify_report

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

    parser = argparse.ArgumentParser(prog="onegraph", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"onegraph {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("info", help="summarize a .og model (signatures, ops, parameters, "
                                    "layout)")
    p.add_argument("model")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.set_defaults(func=_cmd_info)

    p = sub.add_parser("verify", help="check a .og file's structure and data checksums")
    p.add_argument("model")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.set_defaults(func=_cmd_verify)

    from .convert.cli_commands import register as register_convert

    register_convert(sub)
    from .train.cli_commands import register as register_train

    register_train(sub)
    return parser


def main(argv=None) -> int:
    """Entry point of the `onegraph` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except OneGraphError as e:
        print(f"onegraph {args.command}: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0
    except OSError as e:  # a missing file, a directory given as a file, no permission
        what = f"{e.strerror}: {e.filename!r}" if e.strerror and e.filename else str(e)
        print(f"onegraph {args.command}: {type(e).__name__}: {what}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

"""Operators: string family (StringConcat, StringSplit, StringNormalizer, RegexFullMatch).

String tensors are numpy object arrays of Python `str` (bytes are decoded as UTF-8).
Per-string work is a Python comprehension (numpy has no vectorised string kernels for
object arrays); StringConcat broadcasts with numpy's object `add`. RegexFullMatch runs
RE2 (google-re2) or else Python's `re` on the pattern translated by `regex_re2`.
StringNormalizer ignores `locale` (Python's Unicode case mapping is used).
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .common import broadcast_shape, remember
from .regex_re2 import PatternError, Re2Text, compile_re2
from .registry import TensorInfo, define

_OBJ = np.dtype(object)


def _text(v) -> str:
    # bytes that are not UTF-8 become surrogate escapes, as in strings_tf's bridge
    # (a strict decode raised UnicodeDecodeError from inside the kernels)
    return v.decode("utf-8", "surrogateescape") if isinstance(v, bytes) else str(v)


def _strings(x):
    x = np.asarray(x)
    flat = [_text(v) for v in x.reshape(-1)]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(x.shape)


def _concat_kernel(inputs, attrs, ctx):
    """Elementwise X + Y of strings, with broadcasting."""
    x, y = _strings(inputs[0]), _strings(inputs[1])
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), dtype=object)
    np.add(x, y, out=out)
    return (out,)


def _concat_infer(attrs, inputs):
    return [TensorInfo(_OBJ, broadcast_shape(inputs[0].shape, inputs[1].shape))]


def _split_kernel(inputs, attrs, ctx):
    """Split each string; pad to the longest split with ''. Z holds the part counts."""
    x = _strings(inputs[0])
    delim = attrs["delimiter"] or None  # '' or absent: runs of whitespace
    maxsplit = attrs["maxsplit"]
    maxsplit = -1 if maxsplit is None else int(maxsplit)
    parts = [s.split(delim, maxsplit) if delim is not None else s.split(None, maxsplit)
             for s in x.reshape(-1)]
    width = max((len(p) for p in parts), default=0)
    y = np.empty((len(parts), width), dtype=object)
    y[:] = ""
    for i, p in enumerate(parts):
        y[i, :len(p)] = p
    counts = np.array([len(p) for p in parts], dtype=np.int64)
    return (y.reshape(x.shape + (width,)), counts.reshape(x.shape))


def _split_infer(attrs, inputs):
    shape = inputs[0].shape
    return [TensorInfo(_OBJ, None if shape is None else tuple(shape) + (None,)),
            TensorInfo(np.dtype(np.int64), shape)]


def _normalizer_kernel(inputs, attrs, ctx):
    """Drop stopwords, then change case; [C] or [1, C] in, same rank out."""
    x = _strings(inputs[0])
    if not (x.ndim == 1 or (x.ndim == 2 and x.shape[0] == 1)):
        raise ShapeError(f"StringNormalizer: input must be [C] or [1, C], got {x.shape}")
    action = attrs["case_change_action"]
    if action not in ("NONE", "LOWER", "UPPER"):
        raise OpAttributeError(f"StringNormalizer: unknown case_change_action {action!r}")
    stop = [_text(s) for s in (attrs["stopwords"] or [])]
    sensitive = bool(attrs["is_case_sensitive"])
    if sensitive:
        stopset = set(stop)
        kept = [s for s in x.reshape(-1) if s not in stopset]
    else:
        stopset = {s.casefold() for s in stop}
        kept = [s for s in x.reshape(-1) if s.casefold() not in stopset]
    if action == "LOWER":
        kept = [s.lower() for s in kept]
    elif action == "UPPER":
        kept = [s.upper() for s in kept]
    if not kept:
        kept = [""]
    y = np.empty(len(kept), dtype=object)
    y[:] = kept
    return (y.reshape((1, -1)) if x.ndim == 2 else y,)


def _normalizer_infer(attrs, inputs):
    shape = inputs[0].shape
    if shape is None:
        return [TensorInfo(_OBJ, None)]
    return [TensorInfo(_OBJ, (None,) if len(shape) == 1 else (1, None))]


_PATTERNS: dict = {}


def _regex_engine():
    """(compile, its error type): Google's RE2 (the `google-re2` package, in the onnx
    extra) when installed, as ONNX specifies RE2 syntax and onnxruntime uses it: it
    matches in linear time, so no pattern can make a model hang. Without it, Python's
    `re` on the pattern translated to RE2's meaning (`regex_re2`: ASCII \\d \\w \\s \\b,
    `$` only at the end, RE2-only syntax spelled out, what RE2 refuses refused); its
    backtracking takes exponential time on patterns like "(a+)+$"."""
    try:
        import re2
    except ImportError:
        return compile_re2, (PatternError,)
    options = re2.Options()
    options.log_errors = False  # the error is raised; RE2 would also log it to stderr

    def compile_pattern(pattern):
        try:
            # Re2Text: a str standing for non-UTF-8 bytes is matched as those bytes
            return Re2Text(re2.compile(pattern, options=options))
        except re2.error as e:  # its message comes as bytes
            reason = e.args[0] if e.args else e
            raise re2.error(reason.decode("utf-8", "replace")
                            if isinstance(reason, bytes) else reason) from None
    return compile_pattern, (re2.error, ValueError, TypeError)


def compiled_pattern(pattern: str, op: str, what: str = "pattern"):
    """The RE2 pattern compiled by `_regex_engine`, cached across calls and ops.

    Raises:
        OpAttributeError: it does not compile (names `op` and `what`).
    """
    rx = _PATTERNS.get(pattern)
    if rx is None:
        compile_pattern, error = _regex_engine()
        try:
            rx = compile_pattern(pattern)
        except error as e:
            raise OpAttributeError(f"{op}: bad {what} {pattern!r}: {e}") from None
        remember(_PATTERNS, pattern, rx, 256)
    return rx


def _regex_kernel(inputs, attrs, ctx):
    """True where the whole string matches `pattern` (RE2 syntax; see _regex_engine)."""
    pattern = attrs["pattern"]
    if pattern is None:
        raise OpAttributeError("RegexFullMatch: pattern is required")
    rx = compiled_pattern(pattern, "RegexFullMatch")
    x = _strings(inputs[0])
    y = np.fromiter((rx.fullmatch(s) is not None for s in x.reshape(-1)), dtype=bool,
                    count=x.size)
    return (y.reshape(x.shape),)


def _regex_infer(attrs, inputs):
    return [TensorInfo(np.dtype(bool), inputs[0].shape)]


OPS = (
    define("RegexFullMatch", ["X"], ["Y"], _regex_kernel, attrs=[("pattern", "string", None)],
           infer=_regex_infer, since_version=20),
    define("StringConcat", ["X", "Y"], ["Z"], _concat_kernel, infer=_concat_infer,
           since_version=20),
    define("StringNormalizer", ["X"], ["Y"], _normalizer_kernel,
           attrs=[("case_change_action", "string", "NONE"), ("is_case_sensitive", "int", 0),
                  ("locale", "string", None), ("stopwords", "strings", None)],
           infer=_normalizer_infer, since_version=10),
    define("StringSplit", ["X"], ["Y", "Z"], _split_kernel,
           attrs=[("delimiter", "string", None), ("maxsplit", "int", None)],
           infer=_split_infer, since_version=20),
)

KNOWN_FAILURES: dict[str, str] = {}

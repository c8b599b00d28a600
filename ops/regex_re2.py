"""RE2 regular expressions on Python's `re`: a translation of RE2's syntax.

ONNX's RegexFullMatch and TensorFlow's regex ops speak RE2 (onnxruntime and TF link
Google's RE2), but numpy-only onegraph runs them on Python's `re` when the `google-re2`
package is absent. The dialects differ in ways that change results silently, so
`python_pattern` rewrites an RE2 pattern into a Python one with RE2's meaning:

* `\\d \\w \\s \\b` (and negations) are ASCII-only in RE2 (`\\s` is [\\t\\n\\f\\r ], no
  \\v), Unicode in Python: they become explicit ASCII classes and lookarounds.
* `$` without the m flag matches only at the very end in RE2 (Python's also matches
  before a final newline): it becomes `\\Z`; `\\z` becomes `\\Z`.
* `[[:alpha:]]`-style POSIX classes, `\\Q...\\E` literals, `\\x{10FFFF}` and RE2's
  octal escapes are spelled out; `{,n}` is a literal in RE2 and stays one.
* What RE2 refuses is refused, although Python would accept it (backreferences,
  lookarounds, atomic groups, possessive repeats, `(?#...)`, `\\Z`), so a pattern
  accepted here is one TensorFlow and onnxruntime accept.
* Not supported (refused with a clear message): Unicode classes `\\pL`/`\\p{Greek}`,
  `\\C` (one byte), RE2's ungreedy flag U, and `$` inside a scoped `(?m:...)` group
  is treated as when the m flag is set anywhere in the pattern.

Python's `re` backtracks, so a pattern such as "(a+)+$" can take exponential time on
a crafted input; RE2 cannot. Install google-re2 where that matters.
"""

from __future__ import annotations

import re

_DIGIT = set(range(0x30, 0x3A))
_UPPER = set(range(0x41, 0x5B))
_LOWER = set(range(0x61, 0x7B))
_WORD = _DIGIT | _UPPER | _LOWER | {0x5F}
_SPACE = {0x09, 0x0A, 0x0C, 0x0D, 0x20}           # RE2's \s: no \v
_PUNCT = (set(range(0x21, 0x30)) | set(range(0x3A, 0x41)) | set(range(0x5B, 0x61))
          | set(range(0x7B, 0x7F)))
_POSIX = {"alnum": _DIGIT | _UPPER | _LOWER, "alpha": _UPPER | _LOWER,
          "ascii": set(range(0x80)), "blank": {0x09, 0x20},
          "cntrl": set(range(0x20)) | {0x7F}, "digit": _DIGIT,
          "graph": set(range(0x21, 0x7F)), "lower": _LOWER,
          "print": set(range(0x20, 0x7F)), "punct": _PUNCT,
          "space": {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20}, "upper": _UPPER,
          "word": _WORD, "xdigit": _DIGIT | set(range(0x41, 0x47)) | set(range(0x61, 0x67))}
_PERL = {"d": _DIGIT, "w": _WORD, "s": _SPACE}
_MAX = 0x10FFFF


def _ranges(codes: set, negate: bool) -> str:
    """The members of a class body (no brackets) for a set of code points, or for its
    complement over all of Unicode."""
    points = sorted(codes)
    spans = []
    for c in points:
        if spans and spans[-1][1] == c - 1:
            spans[-1][1] = c
        else:
            spans.append([c, c])
    if negate:
        inverted, start = [], 0
        for lo, hi in spans:
            if lo > start:
                inverted.append([start, lo - 1])
            start = hi + 1
        if start <= _MAX:
            inverted.append([start, _MAX])
        spans = inverted
    out = []
    for lo, hi in spans:
        out.append(f"\\U{lo:08x}" if lo == hi else f"\\U{lo:08x}-\\U{hi:08x}")
    return "".join(out)


_WORD_CLASS = "[" + _ranges(_WORD, False) + "]"
_BOUNDARY = (f"(?:(?<={_WORD_CLASS})(?!{_WORD_CLASS})|(?<!{_WORD_CLASS})(?={_WORD_CLASS}))")
_NOT_BOUNDARY = (f"(?:(?<={_WORD_CLASS})(?={_WORD_CLASS})|(?<!{_WORD_CLASS})"
                 f"(?!{_WORD_CLASS}))")
_REFUSED_GROUPS = (("(?=", "lookahead"), ("(?!", "lookahead"), ("(?<=", "lookbehind"),
                   ("(?<!", "lookbehind"), ("(?>", "atomic group"), ("(?#", "comment group"),
                   ("(?P=", "backreference"))
_MULTILINE = re.compile(r"\(\?[a-zA-Z]*m")


class PatternError(ValueError):
    """An RE2 pattern this translation refuses (RE2 would, or Python cannot run it)."""


def _octal(pattern: str, i: int) -> tuple[str, int]:
    """RE2's octal escape at pattern[i] (after the backslash): \\0, \\0NN or \\1NN..\\7NN;
    a lone \\1..\\9 is a backreference, which RE2 refuses."""
    c = pattern[i]
    digits = c
    j = i + 1
    if c != "0" and not (j < len(pattern) and pattern[j] in "01234567" and c in "1234567"):
        raise PatternError(f"invalid escape sequence: \\{c} (backreferences are not "
                           "supported)")
    while j < len(pattern) and len(digits) < 3 and pattern[j] in "01234567":
        digits += pattern[j]
        j += 1
    return f"\\U{int(digits, 8):08x}", j


def _hex_brace(pattern: str, i: int) -> tuple[str, int]:
    """\\x{HHHH} at pattern[i] (the 'x')."""
    end = pattern.find("}", i)
    digits = pattern[i + 2:end] if end > 0 else ""
    if not digits or any(c not in "0123456789abcdefABCDEF" for c in digits) \
            or int(digits, 16) > _MAX:
        raise PatternError("invalid escape sequence: \\x{")
    return f"\\U{int(digits, 16):08x}", end + 1


def _class(pattern: str, i: int) -> tuple[str, int]:
    """Translate the character class starting at pattern[i] == '['."""
    out = ["["]
    i += 1
    if i < len(pattern) and pattern[i] == "^":
        out.append("^")
        i += 1
    first = True
    while True:
        if i >= len(pattern):
            raise PatternError("missing ]")
        c = pattern[i]
        if c == "]" and not first:
            out.append("]")
            return "".join(out), i + 1
        first = False
        if c == "[" and pattern.startswith("[:", i):
            end = pattern.find(":]", i + 2)
            name = pattern[i + 2:end] if end > 0 else ""
            negate = name.startswith("^")
            codes = _POSIX.get(name.lstrip("^"))
            if codes is None:
                raise PatternError(f"invalid character class range: [:{name}:]")
            out.append(_ranges(codes, negate))
            i = end + 2
        elif c == "\\":
            if i + 1 >= len(pattern):
                raise PatternError("trailing \\")
            e = pattern[i + 1]
            if e.lower() in _PERL:
                out.append(_ranges(_PERL[e.lower()], e.isupper()))
                i += 2
            elif e in "pP":
                raise PatternError(f"Unicode classes \\{e} are not supported by onegraph's "
                                   "regex engine (install google-re2)")
            elif e == "x" and pattern.startswith("{", i + 2):
                text, i = _hex_brace(pattern, i + 1)
                out.append(text)
            elif e.isdigit():
                text, i = _octal(pattern, i + 1)
                out.append(text)
            else:
                out.append(pattern[i:i + 2])
                i += 2
        elif c in "[&~|":   # literal in RE2; Python warns of future set operations
            out.append("\\" + c)
            i += 1
        else:
            out.append(c)
            i += 1


def python_pattern(pattern: str) -> str:
    """The Python `re` pattern that matches as the RE2 pattern `pattern` does.

    Raises:
        PatternError: the pattern uses what RE2 refuses or what Python cannot express.
    """
    multiline = _MULTILINE.search(pattern) is not None
    if re.search(r"\(\?[a-zA-Z]*U", pattern):
        raise PatternError("the ungreedy flag U is not supported by onegraph's regex engine")
    out = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                raise PatternError("trailing \\")
            e = pattern[i + 1]
            if e.lower() in _PERL:
                out.append("[" + _ranges(_PERL[e.lower()], e.isupper()) + "]")
                i += 2
            elif e == "b":
                out.append(_BOUNDARY)
                i += 2
            elif e == "B":
                out.append(_NOT_BOUNDARY)
                i += 2
            elif e == "z":
                out.append("\\Z")
                i += 2
            elif e in "ZC":
                raise PatternError(f"invalid escape sequence: \\{e}" if e == "Z" else
                                   "\\C (one byte) is not supported by onegraph's regex engine")
            elif e in "pP":
                raise PatternError(f"Unicode classes \\{e} are not supported by onegraph's "
                                   "regex engine (install google-re2)")
            elif e == "Q":
                end = pattern.find("\\E", i + 2)
                literal = pattern[i + 2:] if end < 0 else pattern[i + 2:end]
                out.append(re.escape(literal))
                i = n if end < 0 else end + 2
            elif e == "x" and pattern.startswith("{", i + 2):
                text, i = _hex_brace(pattern, i + 1)
                out.append(text)
            elif e.isdigit():
                text, i = _octal(pattern, i + 1)
                out.append(text)
            else:
                out.append(pattern[i:i + 2])
                i += 2
        elif c == "[":
            text, i = _class(pattern, i)
            out.append(text)
        elif c == "(":
            for opener, what in _REFUSED_GROUPS:
                if pattern.startswith(opener, i):
                    raise PatternError(f"invalid perl operator: {opener} ({what}s are not "
                                       "RE2)")
            out.append(c)
            i += 1
        elif c == "$" and not multiline:
            out.append("\\Z")
            i += 1
        elif c == "{" and not re.match(r"\{\d+(,\d*)?\}", pattern[i:]):
            out.append("\\{")   # RE2 reads {,n} (and any other non-repeat) literally
            i += 1
        elif c in "*+?" and pattern.startswith("+", i + 1):
            raise PatternError(f"bad repetition operator: {c}+")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def compile_re2(pattern: str) -> re.Pattern:
    """Compile an RE2 pattern with Python's `re` (see the module docstring).

    Raises:
        PatternError: the pattern is invalid in RE2 or untranslatable (re.error is
            re-raised as PatternError with Python's message).
    """
    try:
        return re.compile(python_pattern(pattern))
    except re.error as e:
        raise PatternError(str(e)) from None

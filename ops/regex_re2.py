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

A str holding lone surrogates stands for bytes that are not UTF-8 (ops/strings_tf.py):
google-re2 cannot take such a str, so `Re2Text` hands RE2 the bytes, as TF does (`.`
does not match a stray byte); Python's `re` sees each surrogate as one character.
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


def _escape(pattern: str, i: int) -> tuple[str, int]:
    """The Python text of the escape at pattern[i] (the backslash, a character after
    it) and the index after it, for the escapes that mean the same inside a character
    class as outside: \\x{HHHH} and octal as \\U escapes, any other kept as written.

    Raises:
        PatternError: \\p or \\P (Unicode classes), a malformed \\x{, or a
            backreference.
    """
    e = pattern[i + 1]
    if e in "pP":
        raise PatternError(f"Unicode classes \\{e} are not supported by onegraph's "
                           "regex engine (install google-re2)")
    if e == "x" and pattern.startswith("{", i + 2):
        return _hex_brace(pattern, i + 1)
    if e.isdigit():
        return _octal(pattern, i + 1)
    return pattern[i:i + 2], i + 2


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
            else:
                text, i = _escape(pattern, i)
                out.append(text)
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
            elif e == "Q":
                end = pattern.find("\\E", i + 2)
                literal = pattern[i + 2:] if end < 0 else pattern[i + 2:end]
                out.append(re.escape(literal))
                i = n if end < 0 else end + 2
            else:
                text, i = _escape(pattern, i)
                out.append(text)
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


_SURROGATES = re.compile("([\ud800-\udfff])")


def text_bytes(s: str) -> bytes:
    """The bytes onegraph's str s stands for (ops/strings_tf.py's bridge): UTF-8 with
    surrogate escapes U+DC80..U+DCFF as the stray bytes they stand for, and any other
    lone surrogate as its three-byte UTF-8 form (which no decode produces)."""
    try:
        return s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        # Both kinds in one str: each surrogate by its own rule (one handler for the
        # whole str would turn the escapes into three bytes each too).
        out = []
        for part in _SURROGATES.split(s):     # text, surrogate, text, ...
            if len(part) == 1 and "\ud800" <= part <= "\udfff":
                escape = "\udc80" <= part <= "\udcff"
                out.append(part.encode("utf-8", "surrogateescape" if escape
                                       else "surrogatepass"))
            else:
                out.append(part.encode("utf-8"))
        return b"".join(out)


def _class_end(pattern: str, i: int) -> int:
    """The index just past the RE2 character class that starts at pattern[i] == '['
    (len(pattern) when it is not closed: the compiler has refused that already)."""
    n = len(pattern)
    i += 1
    if i < n and pattern[i] == "^":
        i += 1
    if i < n and pattern[i] == "]":          # a leading ']' is a literal
        i += 1
    while i < n:
        if pattern[i] == "\\":
            i += 2
        elif pattern.startswith("[:", i):
            end = pattern.find(":]", i + 2)
            i = n if end < 0 else end + 2
        elif pattern[i] == "]":
            return i + 1
        else:
            i += 1
    return n


def keep_captures(pattern: str, keep) -> str:
    """The RE2 pattern with every capturing group whose number is not in `keep` made
    non-capturing ('(?:'), matching exactly what the pattern matches; the kept groups
    are renumbered 1, 2, ... in their order.

    Why: google-re2's Python binding asks RE2 for every group's span on each match,
    and RE2's cost grows with the number of groups it must track: '(' * 2000 + ')' *
    2000 took 0.05 s per search, so a global replace over 10 000 characters ran for
    minutes. TF's RE2 calls ask only for the groups they use (none for a full match,
    those the rewrite names for a replace); this is that, for the binding.
    """
    keep = set(keep)
    out, i, n, group = [], 0, len(pattern), 0
    while i < n:
        c = pattern[i]
        if c == "\\":
            if pattern.startswith("Q", i + 1):       # \Q...\E: all literal
                end = pattern.find("\\E", i + 2)
                j = n if end < 0 else end + 2
            else:
                j = i + 2
            out.append(pattern[i:j])
            i = j
        elif c == "[":
            j = _class_end(pattern, i)
            out.append(pattern[i:j])
            i = j
        elif c == "(" and not pattern.startswith("(?", i):
            group += 1
            out.append("(" if group in keep else "(?:")
            i += 1
        elif c == "(" and (pattern.startswith("(?P<", i) or (
                pattern.startswith("(?<", i) and not pattern.startswith(("(?<=", "(?<!"), i))):
            group += 1
            end = pattern.find(">", i)
            if group in keep or end < 0:
                out.append(c)
                i += 1
            else:
                out.append("(?:")
                i = end + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


class Re2Text:
    """A google-re2 compiled pattern that matches onegraph's strings as bytes.

    TF's strings are bytes and TF hands those bytes to RE2. google-re2 encodes str
    input as strict UTF-8, so a str holding a lone surrogate (onegraph's stand-in for
    bytes that are not UTF-8) raised UnicodeEncodeError; here every str is matched as
    the bytes it stands for (`text_bytes`), so RE2's UTF-8 mode treats a stray byte as
    TF's RE2 does (`.` does not match it). Bytes are also what google-re2 searches
    without re-encoding the whole text on every call (a str costs O(len) per search:
    quadratic over a global replace).

    `search` takes bytes and gives byte positions; see strings_tf's regex replace.
    `fullmatch` runs the pattern without its groups and `keeping` gives one with only
    the groups a rewrite uses (see keep_captures: RE2 slows with every group tracked).
    """

    def __init__(self, compiled):
        self._rx = compiled
        self.groups = compiled.groups
        self._bare = None

    def keeping(self, groups) -> tuple:
        """(a Re2Text of the pattern capturing only the numbered `groups`, {old group
        number: new number}); the pattern itself when it has no other groups."""
        groups = sorted(set(groups))
        numbers = {g: k + 1 for k, g in enumerate(groups)}
        if len(groups) == self.groups:
            return self, {g: g for g in groups}
        import re2   # present: the compiled pattern is google-re2's

        try:
            twin = re2.compile(keep_captures(self._rx.pattern, groups),
                               options=self._rx.options)
        except re2.error:   # keep_captures misread the pattern: keep every group
            return self, {g: g for g in groups}
        if twin.groups != len(groups):   # not the pattern it was meant to be
            return self, {g: g for g in groups}
        return Re2Text(twin), numbers

    def fullmatch(self, s):
        """The match of the whole of s (str, taken as its bytes, or bytes), or None;
        the match has no groups (only whether it matches is asked for)."""
        if self._bare is None:
            self._bare = self.keeping(())[0]
        return self._bare._rx.fullmatch(text_bytes(s) if isinstance(s, str) else s)

    def search(self, s: bytes, pos: int = 0):
        """The first match in bytes s from byte offset pos, or None."""
        return self._rx.search(s, pos)


def utf8_char_length(s: bytes, i: int) -> int:
    """The byte length of the UTF-8 character starting at s[i], 1 for a byte that
    starts none: how far RE2::GlobalReplace steps past an empty match in UTF-8 mode
    (a surrogate's three bytes count as one character, as RE2's chartorune reads
    them)."""
    lead = s[i]
    if lead < 0xC2 or lead >= 0xF5:      # ASCII, a continuation byte, or no lead byte
        return 1
    n = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    try:
        s[i:i + n].decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:           # a truncated or malformed sequence
        return 1
    return n


def compile_re2(pattern: str) -> re.Pattern:
    """Compile an RE2 pattern with Python's `re` (see the module docstring).

    Raises:
        PatternError: the pattern is invalid in RE2 or untranslatable (re.error is
            re-raised as PatternError with Python's message), or nested too deeply
            for re's recursive parser (RecursionError) or with a repeat count past
            its limit (OverflowError).
    """
    try:
        return re.compile(python_pattern(pattern))
    except re.error as e:
        raise PatternError(str(e)) from None
    except (RecursionError, OverflowError) as e:
        raise PatternError(f"the pattern is too deeply nested or too large for "
                           f"Python's re ({type(e).__name__}: {e}); install google-re2"
                           ) from None

"""Operators: onnxruntime's text contrib op Tokenizer (domain "com.microsoft").

skl2onnx writes scikit-learn's CountVectorizer and TfidfVectorizer as StringNormalizer,
Tokenizer, then TfIdfVectorizer, so text pipelines converted from scikit-learn need it.
Inputs, attributes and output layout follow onnxruntime's schema (its
docs/ContribOperators.md); where the schema is silent (empty matches, anchors, several
separators) the behaviour was measured against onnxruntime 1.32 and is stated in the
kernel's docstrings. Patterns are RE2 (google-re2 when installed, else Python's `re` on
the pattern translated by `regex_re2`, as for RegexFullMatch).
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError, UnsupportedOpError
from .regex_re2 import Re2Text, text_bytes, utf8_char_length
from .registry import TensorInfo, define
from .strings import _strings, compiled_pattern

_DOMAIN = "com.microsoft"
_OBJ = np.dtype(object)
_START_TEXT, _END_TEXT = "\x02", "\x03"


def _pattern(pattern: str, what: str):
    """The compiled RE2 pattern (cached with RegexFullMatch's).

    Raises:
        OpAttributeError: the pattern does not compile (names `what`).
    """
    return compiled_pattern(pattern, "Tokenizer", what)


class _Subject:
    """A string as the pattern engine searches it: its UTF-8 bytes for RE2 (positions
    in bytes), the str itself for Python's `re` (positions in characters)."""

    def __init__(self, rx, s: str):
        self.as_bytes = isinstance(rx, Re2Text)
        self.data = text_bytes(s) if self.as_bytes else s

    def __len__(self):
        return len(self.data)

    def piece(self, start: int, stop: int) -> str:
        part = self.data[start:stop]
        return part.decode("utf-8", "surrogateescape") if self.as_bytes else part

    def next_char(self, pos: int) -> int:
        """The position just past the character at pos (past the end: pos + 1)."""
        if self.as_bytes and pos < len(self.data):
            return pos + utf8_char_length(self.data, pos)
        return pos + 1


def _token_matches(rx, s: str, mincharnum: int) -> list[str]:
    """The tokens of s in tokenexp mode: successive leftmost matches of rx, each
    searched from the end of the previous one in the whole string (so '^' matches only
    at its start, as in onnxruntime); an empty match yields nothing and the search
    goes on one character past it; tokens shorter than mincharnum characters are
    dropped."""
    text = _Subject(rx, s)
    tokens, pos = [], 0
    while pos < len(text):
        m = rx.search(text.data, pos)
        if m is None:
            break
        start, stop = m.start(), m.end()
        if stop > start:
            token = text.piece(start, stop)
            if len(token) >= mincharnum:
                tokens.append(token)
            pos = stop
        else:
            pos = text.next_char(start)
    return tokens


def _split_once(rx, sep: str, s: str, mincharnum: int) -> list[str]:
    """The pieces of s between matches of one separator, shorter ones than mincharnum
    characters dropped.

    Raises:
        UnsupportedOpError: the separator matched an empty string (onnxruntime then
            drops characters next to the match by rules not reproduced here).
    """
    text = _Subject(rx, s)
    pieces, pos = [], 0
    while pos <= len(text):
        m = rx.search(text.data, pos)
        if m is None:
            break
        if m.end() == m.start():
            raise UnsupportedOpError(
                f"Tokenizer: separator {sep!r} matched an empty string in {s!r}; "
                f"separators that match empty strings are not supported")
        piece = text.piece(pos, m.start())
        if len(piece) >= mincharnum:
            pieces.append(piece)
        pos = m.end()
    rest = text.piece(pos, len(text))
    if rest and len(rest) >= mincharnum:
        pieces.append(rest)
    return pieces


def _separated(separators, s: str, mincharnum: int) -> list[str]:
    """The tokens of s in separators mode: s split by the first separator, each piece
    split by the second as a string of its own (its '^' matches at the piece's start),
    and so on, as onnxruntime does."""
    pieces = [s]
    for sep, rx in separators:
        pieces = [p for piece in pieces for p in _split_once(rx, sep, piece, mincharnum)]
    return pieces


def _mode(attrs):
    """("chars", None) | ("separators", [(sep, compiled)]) | ("tokenexp", compiled).

    Raises:
        OpAttributeError: neither separators nor tokenexp is set, tokenexp is empty,
            mincharnum is below 1 (or above 1 for characters), or a pattern does not
            compile.
        UnsupportedOpError: an empty separator among others (onnxruntime's handling
            of it is not reproduced).
    """
    if attrs["mincharnum"] < 1:
        raise OpAttributeError(f"Tokenizer: mincharnum must be positive, got "
                               f"{attrs['mincharnum']}")
    separators = [s.decode("utf-8", "surrogateescape") if isinstance(s, bytes) else s
                  for s in attrs["separators"] or []]
    tokenexp = attrs["tokenexp"]
    if isinstance(tokenexp, bytes):
        tokenexp = tokenexp.decode("utf-8", "surrogateescape")
    chars = separators == [""] or (not separators and tokenexp == ".")
    if chars and attrs["mincharnum"] > 1:
        raise OpAttributeError(f"Tokenizer: mincharnum {attrs['mincharnum']} is too big "
                               f"for character tokenization (at most 1)")
    if separators:  # onnxruntime takes the separators when both are set
        if chars:
            return "chars", None
        if "" in separators:
            raise UnsupportedOpError("Tokenizer: an empty separator among others is not "
                                     "supported")
        return "separators", [(s, _pattern(s, "separator")) for s in separators]
    if tokenexp is None:
        raise OpAttributeError("Tokenizer: one of separators and tokenexp must be set")
    if tokenexp == "":
        raise OpAttributeError("Tokenizer: tokenexp must not be empty")
    if chars:
        return "chars", None
    return "tokenexp", _pattern(tokenexp, "tokenexp")


def _check_rank(shape):
    if shape is not None and len(shape) not in (1, 2):
        raise ShapeError(f"Tokenizer: X must have shape [C] or [N, C], got rank "
                         f"{len(shape)}")


def _tokenizer_kernel(inputs, attrs, ctx):
    """Y[..., :] = the tokens of each string of X (shape [C] or [N, C]) along a new
    last axis, padded with pad_value to the most tokens any string has; with `mark`,
    each row's tokens are between "\\x02" and "\\x03", padding after the end mark.
    When no string has a token, Y has a last axis of length 0 (no marks either); an
    empty X gives an empty Y of X's shape, as in onnxruntime.

    Modes: separators [""] or tokenexp "." split into characters; other separators
    split successively (see `_separated`); else tokenexp's matches are the tokens
    (see `_token_matches`). Tokens shorter than mincharnum characters are dropped.

    Raises:
        ShapeError: X is not of rank 1 or 2.
        OpAttributeError, UnsupportedOpError: see `_mode` and `_split_once`.
    """
    x = _strings(inputs[0])
    _check_rank(x.shape)
    mode, how = _mode(attrs)
    if x.size == 0:  # onnxruntime: [0] gives [0], [N, 0] gives [N, 0] (no token axis)
        return (np.empty(x.shape, dtype=object),)
    flat = x.reshape(-1)
    if mode == "chars":
        rows = [list(s) for s in flat]
    elif mode == "separators":
        rows = [_separated(how, s, attrs["mincharnum"]) for s in flat]
    else:
        rows = [_token_matches(how, s, attrs["mincharnum"]) for s in flat]
    width = max((len(r) for r in rows), default=0)
    if width == 0:
        return (np.empty(x.shape + (0,), dtype=object),)
    pad = attrs["pad_value"]
    if isinstance(pad, bytes):
        pad = pad.decode("utf-8", "surrogateescape")
    mark = bool(attrs["mark"])
    y = np.empty((len(rows), width + 2 * mark), dtype=object)
    y[:] = pad
    for i, row in enumerate(rows):
        y[i, :len(row) + 2 * mark] = [_START_TEXT] + row + [_END_TEXT] if mark else row
    return (y.reshape(x.shape + (y.shape[1],)),)


def _tokenizer_infer(attrs, inputs):
    shape = inputs[0].shape
    _check_rank(shape)
    return [TensorInfo(_OBJ, None if shape is None else tuple(shape) + (None,))]


OPS = (
    define("Tokenizer", ("X",), ("Y",), _tokenizer_kernel,
           (("mark", "int"), ("mincharnum", "int"), ("pad_value", "string"),
            ("separators", "strings", None), ("tokenexp", "string", None)),
           infer=_tokenizer_infer, domain=_DOMAIN,
           doc="Splits strings into tokens by RE2 separators or a token pattern."),
)

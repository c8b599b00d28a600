"""Operators: TensorFlow's string ops (onegraph domain), with TF's semantics.

AsString, StringJoin, ReduceJoin, StringStrip, StringLength, StringLower,
StringUpper, StringToNumber, Substr, StaticRegexReplace, EncodeBase64, DecodeBase64,
StringToHashBucketFast (FarmHash Fingerprint64), StringToHashBucketStrong (keyed
SipHash-2-4), StringToHashBucket (TF's legacy Hash64) and StringFormat. TF's
regex_full_match is ONNX's RegexFullMatch (ops/strings.py), which has its meaning.

Strings. TF's strings are bytes; onegraph's are Python `str` (object arrays; fed
bytes are decoded). The bridge is UTF-8 with Python's "surrogateescape" handler:
every str stands for the bytes `s.encode("utf-8", "surrogateescape")`, so bytes that
are not UTF-8 (a byte-unit Substr cutting a character in two, DecodeBase64 of binary
data) come out as str holding lone surrogates U+DC80..U+DCFF, one per stray byte,
and encode back to exactly TF's bytes. Byte units (StringLength/Substr unit BYTE,
hashing, base64) work on those bytes; UTF8_CHAR units count characters as TF does
(every byte that is not a UTF-8 continuation byte starts one).

Regexes are RE2's syntax (as TF's), run by Python's `re` after `regex_re2`'s
translation; global replacement skips an empty match right after a previous match,
as RE2::GlobalReplace does (Python's re.sub would not).

Kernels loop over the flat array in Python (numpy has no kernels for object arrays
of str); the three hashes are vectorised over all strings with uint64 arithmetic on
a zero-padded byte matrix. Errors TF raises while running (InvalidArgumentError)
are ExecutionError here, naming the offending string. No gradients (strings).
"""

from __future__ import annotations

import base64
import re

import numpy as np

from ..errors import ExecutionError, OpAttributeError, ShapeError
from .common import remember
from .regex_re2 import PatternError, Re2Text, text_bytes, utf8_char_length
from .strings import _regex_engine  # RE2 (linear time) when installed, as RegexFullMatch
from .registry import TensorInfo, define

_OBJ = np.dtype(object)
_D = "onegraph"
_ASCII_SPACE = " \t\n\v\f\r"


# --------------------------------------------------------------------------- helpers

def _text(v) -> str:
    if isinstance(v, bytes):
        return v.decode("utf-8", "surrogateescape")
    return v if isinstance(v, str) else str(v)


def _utf8(s: str) -> bytes:
    """The bytes a str stands for (see the module docstring): a surrogate escape is
    its byte, any other lone surrogate (no decode makes one) its UTF-8 form."""
    return text_bytes(s)


def _from_utf8(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def _flat(x) -> list:
    """The strings of array x, flattened, as str."""
    x = np.asarray(x)
    return [_text(v) for v in x.reshape(-1)]


def _obj(items, shape) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)


def _same_shape_infer(dtype):
    def infer(attrs, inputs):
        return [TensorInfo(np.dtype(dtype), inputs[0].shape)]
    return infer


def _show(s: str, limit: int = 80) -> str:
    text = repr(s)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _index(flat_index: int, shape) -> str:
    if len(shape) <= 1:
        return str(flat_index)
    return str(tuple(int(i) for i in np.unravel_index(flat_index, shape)))


def _is_trail(byte: int) -> bool:
    return byte & 0xC0 == 0x80


# --------------------------------------------------------------------------- AsString

_INT_KINDS = "iu"


def _as_string_problem(attrs) -> str | None:
    fill = attrs["fill"]
    if len(fill) > 1:
        return "Fill string must be one or fewer characters"
    if fill and fill not in " +-0#":
        return f"Fill argument not supported: {fill!r} (one of ' ', '+', '-', '0', '#')"
    if attrs["scientific"] and attrs["shortest"]:
        return "Cannot select both scientific and shortest notation"
    return None


# A width or precision this large would make every element a string of that many
# characters (2**31 took seconds and gigabytes per element).
_MAX_FORMAT_WIDTH = 1 << 16


def _as_string_format(attrs, kind: str, what: str) -> str | None:
    """printf format for one element of numpy kind `kind` (TF's AsString rules); None
    for bools and strings, which are formatted separately.

    Raises:
        OpAttributeError: precision, scientific or shortest given for a non-float.
    """
    precision, width = int(attrs["precision"]), int(attrs["width"])
    if max(precision, width) > _MAX_FORMAT_WIDTH:
        raise OpAttributeError(f"AsString: width {width} and precision {precision} must "
                               f"be at most {_MAX_FORMAT_WIDTH} (each string would hold "
                               f"that many characters)")
    if kind in "OUS":   # TF ignores precision and notation for strings
        return None
    if kind != "f" and precision > -1:
        raise OpAttributeError(f"AsString: precision not supported for datatype {what}")
    if kind != "f" and (attrs["scientific"] or attrs["shortest"]):
        raise OpAttributeError(f"AsString: scientific and shortest format not supported "
                               f"for datatype {what}")
    if kind == "b":
        return None
    fmt = "%" + attrs["fill"] + (str(width) if width > -1 else "")
    if kind in _INT_KINDS:
        return fmt + "d"
    fmt += f".{precision}" if precision > -1 else ""
    return fmt + ("g" if attrs["shortest"] else "e" if attrs["scientific"] else "f")


def _c_nonfinite(v: float, fmt_flags: str, width: int) -> str:
    """inf/nan as C's printf writes them: a sign from the value (so -nan), '+' or ' '
    flags, padded with spaces (never zeros) to width, left-justified with '-'."""
    sign = "-" if np.signbit(v) else "+" if "+" in fmt_flags else " " if " " in fmt_flags \
        else ""
    text = sign + ("nan" if np.isnan(v) else "inf")
    return text.ljust(width) if "-" in fmt_flags else text.rjust(width)


def _as_string_kernel(inputs, attrs, ctx):
    x = np.asarray(inputs[0])
    problem = _as_string_problem(attrs)
    if problem:
        raise OpAttributeError(f"AsString: {problem}")
    kind = x.dtype.kind
    fmt = _as_string_format(attrs, kind, x.dtype.name)
    flat = x.reshape(-1)
    if kind == "b":
        items = ["true" if v else "false" for v in flat]
    elif kind in "OUS":   # printf's %s pads to a width in bytes
        width, left = int(attrs["width"]), attrs["fill"] == "-"
        items = []
        for v in flat:
            s = _text(v)
            pad = " " * max(0, width - (len(s) if s.isascii() else len(_utf8(s))))
            items.append(s + pad if left else pad + s)
    elif kind in _INT_KINDS:
        items = [fmt % v for v in flat.tolist()]
    elif kind == "f":
        width = int(attrs["width"])
        values = flat.astype(np.float64).tolist()
        items = [fmt % v if v - v == 0 else _c_nonfinite(v, attrs["fill"], width)
                 for v in values]
    else:
        raise OpAttributeError(f"AsString: datatype {x.dtype} is not supported")
    return (_obj(items, x.shape),)


# --------------------------------------------------------------------------- joins

def _join_kernel(inputs, attrs, ctx):
    """StringJoin: elementwise join of tensors of one shape; scalars are repeated."""
    sep = attrs["separator"]
    arrays = [np.asarray(v) for v in inputs]
    shapes = {a.shape for a in arrays if a.ndim}
    if len(shapes) > 1:
        a, b = sorted(shapes, key=str)[:2]
        raise ExecutionError(f"StringJoin: input shapes do not match: {list(a)} vs. "
                             f"{list(b)} (only scalars are broadcast)")
    shape = shapes.pop() if shapes else ()
    size = int(np.prod(shape, dtype=np.int64))
    columns = [_flat(a) if a.ndim else _flat(a) * size for a in arrays]
    items = [sep.join(parts) for parts in zip(*columns)] if columns else [""] * size
    return (_obj(items, shape),)


def _join_infer(attrs, inputs):
    shapes = [i.shape for i in inputs]
    if any(s is None for s in shapes):
        known = [s for s in shapes if s is not None and len(s)]
        return [TensorInfo(_OBJ, known[0] if known else None)]
    full = [s for s in shapes if len(s)]
    if not full:
        return [TensorInfo(_OBJ, ())]
    for s in full[1:]:
        if len(s) != len(full[0]) or any(a is not None and b is not None and a != b
                                         for a, b in zip(s, full[0])):
            raise ShapeError(f"StringJoin: input shapes do not match: {list(full[0])} vs. "
                             f"{list(s)} (only scalars are broadcast)")
    return [TensorInfo(_OBJ, tuple(full[0]))]


def _reduce_axes(axes, rank: int) -> list:
    """TF's reduction_indices: each in [-rank, rank), no repeats; order kept."""
    out = []
    for a in axes:
        a = int(a)
        if not -rank <= a < rank:
            raise ExecutionError(f"ReduceJoin: invalid reduction dimension {a} for input "
                                 f"with {rank} dimension(s)")
        a %= rank
        if a in out:
            raise ExecutionError(f"ReduceJoin: duplicate reduction dimension {a}")
        out.append(a)
    return out


def _reduce_join_kernel(inputs, attrs, ctx):
    """ReduceJoin: join along `axes` (all, last first, when the input is omitted).
    TF joins with the first listed axis varying fastest: axes [0, 1] of [[a, b],
    [c, d]] give "acbd", axes [1, 0] "abcd"."""
    x = np.asarray(inputs[0])
    rank = x.ndim
    if inputs[1] is None:
        axes = list(range(rank - 1, -1, -1))
    else:
        axes = _reduce_axes(np.asarray(inputs[1]).reshape(-1).tolist(), rank)
    kept = [d for d in range(rank) if d not in axes]
    moved = np.transpose(x, kept + axes[::-1]) if rank else x
    count = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
    out_shape = tuple(x.shape[d] for d in kept)
    sep = attrs["separator"]
    if count:
        items = [sep.join(_text(v) for v in row) for row in moved.reshape(-1, count)]
    else:   # nothing to join: '' for each kept position
        items = [""] * int(np.prod(out_shape, dtype=np.int64))
    if attrs["keep_dims"]:
        out_shape = tuple(1 if d in axes else x.shape[d] for d in range(rank))
    return (_obj(items, out_shape),)


def _reduce_join_infer(attrs, inputs):
    shape = inputs[0].shape
    axes_info = inputs[1] if len(inputs) > 1 else None
    if shape is None:
        return [TensorInfo(_OBJ, None)]
    rank = len(shape)
    if axes_info is None:
        axes = list(range(rank))
    elif axes_info.value is not None:
        try:
            axes = _reduce_axes(np.asarray(axes_info.value).reshape(-1).tolist(), rank)
        except ExecutionError as e:
            raise ShapeError(str(e)) from None
    else:   # axes known only at run time: keep_dims keeps the rank
        return [TensorInfo(_OBJ, (None,) * rank if attrs["keep_dims"] else None)]
    if attrs["keep_dims"]:
        return [TensorInfo(_OBJ, tuple(1 if d in axes else shape[d] for d in range(rank)))]
    return [TensorInfo(_OBJ, tuple(shape[d] for d in range(rank) if d not in axes))]


# --------------------------------------------------------------------------- per-string maps

def _strip_kernel(inputs, attrs, ctx):
    """StringStrip: drop leading and trailing ASCII whitespace (TF's absl rule)."""
    x = np.asarray(inputs[0])
    return (_obj([s.strip(_ASCII_SPACE) for s in _flat(x)], x.shape),)


def _char_count(s: str) -> int:
    try:
        s.encode("utf-8")
        return len(s)
    except UnicodeEncodeError:   # stray bytes: count what TF counts
        return sum(1 for b in _utf8(s) if not _is_trail(b))


def _check_unit(attrs) -> str | None:
    if attrs["unit"] not in ("BYTE", "UTF8_CHAR"):
        return f"unit must be 'BYTE' or 'UTF8_CHAR', got {attrs['unit']!r}"
    return None


def _length_kernel(inputs, attrs, ctx):
    x = np.asarray(inputs[0])
    flat = _flat(x)
    if attrs["unit"] == "BYTE":
        lengths = [len(s) if s.isascii() else len(_utf8(s)) for s in flat]
    else:
        lengths = [_char_count(s) for s in flat]
    return (np.asarray(lengths, dtype=np.int32).reshape(x.shape),)


def _check_encoding(attrs) -> str | None:
    if attrs["encoding"] not in ("", "utf-8"):
        return f"only utf-8 or '' (no encoding) is supported, received {attrs['encoding']!r}"
    return None


_ASCII_LOWER = {c: c + 32 for c in range(0x41, 0x5B)}
_ASCII_UPPER = {c + 32: c for c in range(0x41, 0x5B)}


def _case_kernel(table, method):
    def kernel(inputs, attrs, ctx):
        """ASCII letters only by default (TF's encoding ''); with encoding 'utf-8', full
        Unicode case mapping (ICU's, as Python's str.lower/upper: 'ß' -> 'SS', final
        sigma)."""
        x = np.asarray(inputs[0])
        flat = _flat(x)
        if attrs["encoding"] == "utf-8":
            items = [getattr(s, method)() for s in flat]
        else:
            items = [s.translate(table) for s in flat]
        return (_obj(items, x.shape),)
    return kernel


# --------------------------------------------------------------------------- StringToNumber

_FLOAT_RE = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                       r"|inf|infinity|nan)", re.IGNORECASE)
_HEX_RE = re.compile(r"([+-]?)0[xX]((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)"
                     r"(?:[pP][+-]?[0-9]+)?)")
_INT_RE = re.compile(r"[+-]?[0-9]+")
_NUMBER_TYPES = {1: np.float32, 11: np.float64, 6: np.int32, 7: np.int64}


def _parse_float(s: str):
    """TF's safe_strtod/strtof grammar: ASCII whitespace around, an optional sign,
    decimal or 0x-hex (with p exponent) digits, inf/infinity/nan in any case; None
    when it does not parse."""
    t = s.strip(_ASCII_SPACE)
    if _FLOAT_RE.fullmatch(t):
        return float(t)
    m = _HEX_RE.fullmatch(t)
    if m:
        try:
            value = float.fromhex(m.group(2))
        except OverflowError:
            value = float("inf")
        return -value if m.group(1) == "-" else value
    return None


def _check_out_type(attrs) -> str | None:
    if attrs["out_type"] not in _NUMBER_TYPES:
        return (f"out_type must be float32 (1), float64 (11), int32 (6) or int64 (7), got "
                f"{attrs['out_type']}")
    return None


def _to_number_kernel(inputs, attrs, ctx):
    """StringToNumber: floats parse as _parse_float says (out of range: +-inf), ints
    as optional sign and decimal digits in range; anything else is an error naming
    the string, as TF's InvalidArgumentError does."""
    x = np.asarray(inputs[0])
    dtype = np.dtype(_NUMBER_TYPES[attrs["out_type"]])
    flat = _flat(x)
    if dtype.kind == "f":
        values = [_parse_float(s) for s in flat]
    else:
        info = np.iinfo(dtype)
        values = []
        for s in flat:
            t = s.strip(_ASCII_SPACE)
            v = int(t) if _INT_RE.fullmatch(t) else None
            values.append(v if v is not None and info.min <= v <= info.max else None)
    bad = next((s for s, v in zip(flat, values) if v is None), None)
    if bad is not None:
        raise ExecutionError(f"StringToNumber could not correctly convert string: "
                             f"{_show(bad)} (to {dtype.name})")
    with np.errstate(over="ignore"):   # float32 overflow is inf, as TF's
        out = np.asarray(values, dtype=np.float64 if dtype.kind == "f" else dtype)
        return (out.astype(dtype).reshape(x.shape),)


# --------------------------------------------------------------------------- Substr

def _substr_bytes(s: str, pos: int, length: int):
    """TF's byte Substr of one string; None when pos is out of range."""
    b = s if s.isascii() else _utf8(s)
    size = len(b)
    if abs(pos) > size:
        return None
    if pos < 0:
        pos += size
    part = b[pos:] if length < 0 else b[pos:pos + length]
    return part if isinstance(part, str) else _from_utf8(part)


def _substr_chars(s: str, pos: int, length: int):
    """TF's UTF8_CHAR Substr (a negative length gives ''); None when pos is out of
    range."""
    try:
        s.encode("utf-8")
        chars = None
        size = len(s)
    except UnicodeEncodeError:   # stray bytes: characters start at non-trail bytes
        b = _utf8(s)
        chars = [i for i, c in enumerate(b) if not _is_trail(c)]
        size = len(chars)
    if abs(pos) > size:
        return None
    if pos < 0:
        pos += size
    if length < 0:
        return ""
    if chars is None:
        return s[pos:pos + length]
    start = chars[pos] if pos < size else len(b)
    end = chars[pos + length] if pos + length < size else len(b)
    return _from_utf8(b[start:end])


def _substr_kernel(inputs, attrs, ctx):
    """Substr: pos and len have one shape; the input is taken elementwise when it has
    that shape too, else broadcast against it (numpy rules)."""
    x, pos, length = (np.asarray(v) for v in inputs)
    if pos.shape != length.shape:
        raise ExecutionError(f"Substr: pos and len should have the same shape, got: "
                             f"{list(pos.shape)} vs. {list(length.shape)}")
    try:
        shape = np.broadcast_shapes(x.shape, pos.shape)
    except ValueError:
        raise ExecutionError(f"Substr: incompatible shapes: {list(x.shape)} vs. "
                             f"{list(pos.shape)}") from None
    xs = np.broadcast_to(x, shape).reshape(-1)
    ps = np.broadcast_to(pos, shape).reshape(-1).tolist()
    ls = np.broadcast_to(length, shape).reshape(-1).tolist()
    cut = _substr_chars if attrs["unit"] == "UTF8_CHAR" else _substr_bytes
    items = []
    for k, (v, p, n) in enumerate(zip(xs, ps, ls)):
        s = _text(v)
        part = cut(s, p, n)
        if part is None:
            raise ExecutionError(f"Substr: pos {p} out of range for string {_show(s)} at "
                                 f"index {_index(k, shape)}")
        items.append(part)
    return (_obj(items, shape),)


def _substr_infer(attrs, inputs):
    from .common import broadcast_shape

    return [TensorInfo(_OBJ, broadcast_shape(inputs[0].shape, inputs[1].shape,
                                             where="Substr: "))]


# --------------------------------------------------------------------------- regex replace

_REPLACERS: dict = {}
_REWRITE_PART = re.compile(r"\\(.?)", re.DOTALL)


def _parse_rewrite(rewrite: str, groups: int) -> list:
    """RE2's rewrite string as a list of literal strs and group numbers: \\0..\\9 name
    groups, \\\\ is a backslash.

    Raises:
        PatternError: another escape, or a group the pattern does not have.
    """
    parts, at = [], 0
    for m in _REWRITE_PART.finditer(rewrite):
        parts.append(rewrite[at:m.start()])
        c = m.group(1)
        if c == "\\":
            parts.append("\\")
        elif c.isdigit() and c.isascii():
            if int(c) > groups:
                raise PatternError(f"rewrite {rewrite!r} uses \\{c}, but the pattern has "
                                   f"{groups} group(s)")
            parts.append(int(c))
        else:
            raise PatternError(f"invalid rewrite pattern: {rewrite!r} (\\{c} is neither "
                               "\\0..\\9 nor \\\\)")
        at = m.end()
    parts.append(rewrite[at:])
    return [p for p in parts if p != ""]


def _replacer(pattern: str, rewrite: str):
    """(compiled pattern, parsed rewrite), memoised.

    Raises:
        OpAttributeError: the pattern or the rewrite is invalid.
    """
    key = (pattern, rewrite)
    found = _REPLACERS.get(key)
    if found is None:
        compile_pattern, engine_errors = _regex_engine()   # a tuple of error types
        try:
            rx = compile_pattern(pattern)
            parts = _parse_rewrite(rewrite, rx.groups)
            if isinstance(rx, Re2Text):
                # RE2 then tracks only the groups the rewrite inserts (see keep_captures)
                used = {p for p in parts if isinstance(p, int) and p > 0}
                rx, numbers = rx.keeping(used)
                parts = [numbers.get(p, p) if isinstance(p, int) else p for p in parts]
            found = (rx, parts)
        except (PatternError, *engine_errors) as e:
            raise OpAttributeError(f"StaticRegexReplace: invalid pattern {pattern!r} or "
                                   f"rewrite {rewrite!r}: {e}") from None
        remember(_REPLACERS, key, found, 256)
    return found


def _expand(m, parts, empty="") -> str:
    """The rewrite for match m; `empty` ("" or b"") is the type of the text."""
    return empty.join(p if isinstance(p, (str, bytes)) else (m.group(p) or empty)
                      for p in parts)


def _replace_one(rx, parts, s, replace_global: bool):
    """RE2::Replace / RE2::GlobalReplace: an empty match right where the previous
    match ended is skipped (one character is copied instead). s is a str, or bytes
    with `parts` in bytes too (see _regex_replace_kernel); in bytes a character is a
    UTF-8 sequence, as RE2 steps."""
    empty = s[:0]
    step = utf8_char_length if isinstance(s, bytes) else (lambda text, i: 1)
    if not replace_global:
        m = rx.search(s)
        return s if m is None else s[:m.start()] + _expand(m, parts, empty) + s[m.end():]
    out, at, last_end, n = [], 0, -1, len(s)
    while at <= n:
        m = rx.search(s, at)
        if m is None:
            break
        if m.start() == m.end() and m.start() == last_end:
            size = step(s, m.start()) if m.start() < n else 1
            if m.start() < n:
                out.append(s[at:m.start() + size])
            at = m.start() + size
            continue
        out.append(s[at:m.start()])
        out.append(_expand(m, parts, empty))
        at = last_end = m.end()
    out.append(s[at:])
    return empty.join(out)


def _check_regex_replace(attrs) -> str | None:
    try:
        _replacer(attrs["pattern"], attrs["rewrite"])
    except OpAttributeError as e:
        return str(e).split(": ", 1)[1]
    return None


def _regex_replace_kernel(inputs, attrs, ctx):
    """StaticRegexReplace. With google-re2 each string is rewritten as the bytes it
    stands for, as TF's RE2 sees them (RE2 cannot take a str holding stray bytes, and
    searches bytes without re-encoding them per match), and the result decoded back;
    Python's `re` works on the str."""
    x = np.asarray(inputs[0])
    rx, parts = _replacer(attrs["pattern"], attrs["rewrite"])
    glob = bool(attrs["replace_global"])
    if isinstance(rx, Re2Text):
        byte_parts = [_utf8(p) if isinstance(p, str) else p for p in parts]
        items = []
        for s in _flat(x):
            raw = _utf8(s)
            out = _replace_one(rx, byte_parts, raw, glob)
            # unchanged: keep the str as given (a lone surrogate that is no escape
            # would come back as three escapes: the same bytes, another str)
            items.append(s if out == raw else _from_utf8(out))
    else:
        items = [_replace_one(rx, parts, s, glob) for s in _flat(x)]
    return (_obj(items, x.shape),)


# --------------------------------------------------------------------------- base64

_B64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def _encode_base64_kernel(inputs, attrs, ctx):
    """EncodeBase64: web-safe alphabet (- and _), '=' padding only with pad."""
    x = np.asarray(inputs[0])
    pad = bool(attrs["pad"])
    items = []
    for s in _flat(x):
        text = base64.urlsafe_b64encode(_utf8(s)).decode("ascii")
        items.append(text if pad else text.rstrip("="))
    return (_obj(items, x.shape),)


def _decode_one(s: str):
    """TF's Base64Decode of one string; (bytes, None) or (None, error)."""
    n = len(s)
    if n == 0:
        return b"", None
    body_len = 4 * ((n - 1) // 4)
    body, tail = s[:body_len], s[body_len:]
    if any(c not in _B64_ALPHABET for c in body):
        return None, "Invalid character found in base64."
    if len(tail) == 4 and tail[3] == "=":
        tail = tail[:2] if tail[2] == "=" else tail[:3]
    if len(tail) == 1:
        return None, "Base64 string length cannot be 1 modulo 4."
    if any(c not in _B64_ALPHABET for c in tail):
        return None, "Invalid character found in base64."
    # TF decodes the last group padded with 'A' and ignores the leftover bits
    raw = base64.urlsafe_b64decode(body + tail + "A" * (4 - len(tail)))
    return raw[:len(body) // 4 * 3 + len(tail) * 3 // 4], None


def _decode_base64_kernel(inputs, attrs, ctx):
    """DecodeBase64: web-safe alphabet, padding optional; bytes that are not UTF-8
    come out surrogate-escaped (see the module docstring)."""
    x = np.asarray(inputs[0])
    items = []
    for k, s in enumerate(_flat(x)):
        raw, error = _decode_one(s)
        if error:
            raise ExecutionError(f"DecodeBase64: {error} (string {_show(s)} at index "
                                 f"{_index(k, x.shape)})")
        items.append(_from_utf8(raw))
    return (_obj(items, x.shape),)


# --------------------------------------------------------------------------- hashes

_U = np.uint64
_M64 = (1 << 64) - 1


def _byte_matrix(blobs: list, extra: int):
    """A zero-padded (n, max_len + extra) uint8 matrix of the byte strings and their
    lengths (int64)."""
    lens = np.fromiter((len(b) for b in blobs), dtype=np.int64, count=len(blobs))
    width = int(lens.max(initial=0)) + extra
    buf = np.zeros((len(blobs), width), dtype=np.uint8)
    if blobs:
        joined = np.frombuffer(b"".join(blobs), dtype=np.uint8)
        rows = np.repeat(np.arange(len(blobs)), lens)
        starts = np.repeat(np.cumsum(lens) - lens, lens)
        buf[rows, np.arange(joined.size) - starts] = joined
    return buf, lens


def _fetch(buf, rows, offsets, size: int):
    """Little-endian uint64 of `size` (4 or 8) bytes at per-row byte offsets."""
    cols = np.asarray(offsets, dtype=np.int64)[:, None] + np.arange(size)
    chunk = np.ascontiguousarray(buf[rows[:, None], cols])
    if size == 8:
        return chunk.view("<u8").reshape(-1).astype(_U)
    return chunk.view("<u4").reshape(-1).astype(_U)


def _rot(v, s: int):
    return (v >> _U(s)) | (v << _U(64 - s))


def _shift_mix(v):
    return v ^ (v >> _U(47))


_K0, _K1, _K2 = _U(0xC3A5C85C97CB3127), _U(0xB492B66FBE98F273), _U(0x9AE16A3B2F90404F)


def _len16(u, v, mul):
    a = (u ^ v) * mul
    a ^= a >> _U(47)
    b = (v ^ a) * mul
    b ^= b >> _U(47)
    return b * mul


def _weak32(buf, rows, off, a, b):
    """FarmHash's WeakHashLen32WithSeeds over the 32 bytes at `off`."""
    w, x = _fetch(buf, rows, off, 8), _fetch(buf, rows, off + 8, 8)
    y, z = _fetch(buf, rows, off + 16, 8), _fetch(buf, rows, off + 24, 8)
    a = a + w
    b = _rot(b + a + z, 21)
    c = a
    a = a + x + y
    b = b + _rot(a, 44)
    return a + z, b + c


def fingerprint64(blobs: list) -> np.ndarray:
    """FarmHash's Fingerprint64 (farmhashna::Hash64) of each byte string, as uint64:
    TF's tf.fingerprint and StringToHashBucketFast hash. Vectorised per length class
    (0-16, 17-32, 33-64, over 64 bytes), the long strings' 64-byte loop masked row by
    row."""
    buf, lens = _byte_matrix(blobs, 64)
    out = np.zeros(len(blobs), dtype=_U)
    ln = lens.astype(_U)
    with np.errstate(over="ignore"):
        for lo, hi in ((0, 0), (1, 3), (4, 7), (8, 16), (17, 32), (33, 64), (65, None)):
            sel = np.flatnonzero((lens >= lo) & ((lens <= hi) if hi is not None else True))
            if sel.size == 0:
                continue
            n, L = lens[sel], ln[sel]
            mul = _K2 + L * _U(2)
            f64 = lambda off: _fetch(buf, sel, off, 8)   # noqa: E731
            if hi == 0:
                h = np.full(sel.size, _K2, dtype=_U)
            elif hi == 3:
                a = buf[sel, 0].astype(_U)
                b = buf[sel, n >> 1].astype(_U)
                c = buf[sel, n - 1].astype(_U)
                y = a + (b << _U(8))
                z = L + (c << _U(2))
                h = _shift_mix((y * _K2) ^ (z * _K0)) * _K2
            elif hi == 7:
                a = _fetch(buf, sel, np.zeros_like(n), 4)
                h = _len16(L + (a << _U(3)), _fetch(buf, sel, n - 4, 4), mul)
            elif hi == 16:
                a = f64(np.zeros_like(n)) + _K2
                b = f64(n - 8)
                c = _rot(b, 37) * mul + a
                d = (_rot(a, 25) + b) * mul
                h = _len16(c, d, mul)
            elif hi == 32:
                a = f64(np.zeros_like(n)) * _K1
                b = f64(np.full_like(n, 8))
                c = f64(n - 8) * mul
                d = f64(n - 16) * _K2
                h = _len16(_rot(a + b, 43) + _rot(c, 30) + d, a + _rot(b + _K2, 18) + c, mul)
            elif hi == 64:
                a = f64(np.zeros_like(n)) * _K2
                b = f64(np.full_like(n, 8))
                c = f64(n - 8) * mul
                d = f64(n - 16) * _K2
                y = _rot(a + b, 43) + _rot(c, 30) + d
                z = _len16(y, a + _rot(b + _K2, 18) + c, mul)
                e = f64(np.full_like(n, 16)) * mul
                f = f64(np.full_like(n, 24))
                g = (y + f64(n - 32)) * mul
                hh = (z + f64(n - 24)) * mul
                h = _len16(_rot(e + f, 43) + _rot(g, 30) + hh, e + _rot(f + a, 18) + g, mul)
            else:
                h = _long_fingerprint(buf, sel, n, L)
            out[sel] = h
    return out


def _long_fingerprint(buf, sel, n, L):
    """farmhashna::Hash64 of strings over 64 bytes (seed 81)."""
    seed = 81
    y0 = (seed * 0xB492B66FBE98F273 + 113) & _M64
    z0 = (((y0 * 0x9AE16A3B2F90404F + 113) & _M64) ^ ((((y0 * 0x9AE16A3B2F90404F + 113)
                                                        & _M64)) >> 47))
    z0 = (z0 * 0x9AE16A3B2F90404F) & _M64
    count = sel.size
    x = np.full(count, seed, dtype=_U) * _K2 + _fetch(buf, sel, np.zeros_like(n), 8)
    y = np.full(count, y0, dtype=_U)
    z = np.full(count, z0, dtype=_U)
    v1 = v2 = w1 = w2 = np.zeros(count, dtype=_U)
    blocks = (n - 1) // 64
    for j in range(int(blocks.max())):
        act = j < blocks
        s = np.full_like(n, 64 * j)
        nx = _rot(x + y + v1 + _fetch(buf, sel, s + 8, 8), 37) * _K1
        ny = _rot(y + v2 + _fetch(buf, sel, s + 48, 8), 42) * _K1
        nx = nx ^ w2
        ny = ny + v1 + _fetch(buf, sel, s + 40, 8)
        nz = _rot(z + w1, 33) * _K1
        nv1, nv2 = _weak32(buf, sel, s, v2 * _K1, nx + w1)
        nw1, nw2 = _weak32(buf, sel, s + 32, nz + w2, ny + _fetch(buf, sel, s + 16, 8))
        nx, nz = nz, nx
        x, y, z = np.where(act, nx, x), np.where(act, ny, y), np.where(act, nz, z)
        v1, v2 = np.where(act, nv1, v1), np.where(act, nv2, v2)
        w1, w2 = np.where(act, nw1, w1), np.where(act, nw2, w2)
    mul = _K1 + ((z & _U(0xFF)) << _U(1))
    s = n - 64
    w1 = w1 + ((L - _U(1)) & _U(63))
    v1 = v1 + w1
    w1 = w1 + v1
    x = _rot(x + y + v1 + _fetch(buf, sel, s + 8, 8), 37) * mul
    y = _rot(y + v2 + _fetch(buf, sel, s + 48, 8), 42) * mul
    x = x ^ (w2 * _U(9))
    y = y + v1 * _U(9) + _fetch(buf, sel, s + 40, 8)
    z = _rot(z + w1, 33) * mul
    v1, v2 = _weak32(buf, sel, s, v2 * mul, x + w1)
    w1, w2 = _weak32(buf, sel, s + 32, z + w2, y + _fetch(buf, sel, s + 16, 8))
    x, z = z, x
    return _len16(_len16(v1, w1, mul) + _shift_mix(y) * _K0 + z,
                  _len16(v2, w2, mul) + x, mul)


def _sip_round(v0, v1, v2, v3):
    v0 = v0 + v1
    v1 = _rot(v1, 64 - 13) ^ v0
    v0 = _rot(v0, 64 - 32)
    v2 = v2 + v3
    v3 = _rot(v3, 64 - 16) ^ v2
    v0 = v0 + v3
    v3 = _rot(v3, 64 - 21) ^ v0
    v2 = v2 + v1
    v1 = _rot(v1, 64 - 17) ^ v2
    v2 = _rot(v2, 64 - 32)
    return v0, v1, v2, v3


def siphash24(blobs: list, key0: int, key1: int) -> np.ndarray:
    """SipHash-2-4 of each byte string under the 128-bit key (key0, key1), as uint64:
    TF's StringToHashBucketStrong hash (highwayhash's SipHash). Vectorised over the
    strings, each 8-byte block masked row by row."""
    buf, lens = _byte_matrix(blobs, 8)
    count = len(blobs)
    rows = np.arange(count)
    k0 = np.full(count, key0 & _M64, dtype=_U)
    k1 = np.full(count, key1 & _M64, dtype=_U)
    with np.errstate(over="ignore"):
        v0, v1 = k0 ^ _U(0x736F6D6570736575), k1 ^ _U(0x646F72616E646F6D)
        v2, v3 = k0 ^ _U(0x6C7967656E657261), k1 ^ _U(0x7465646279746573)
        blocks = lens // 8
        for j in range(int(blocks.max(initial=0))):
            act = j < blocks
            m = _fetch(buf, rows, np.full(count, 8 * j), 8)
            n0, n1, n2, n3 = v0, v1, v2, v3 ^ m
            n0, n1, n2, n3 = _sip_round(*_sip_round(n0, n1, n2, n3))
            n0 = n0 ^ m
            v0, v1 = np.where(act, n0, v0), np.where(act, n1, v1)
            v2, v3 = np.where(act, n2, v2), np.where(act, n3, v3)
        last = _fetch(buf, rows, blocks * 8, 8) | ((lens.astype(_U) & _U(0xFF)) << _U(56))
        v3 = v3 ^ last
        v0, v1, v2, v3 = _sip_round(*_sip_round(v0, v1, v2, v3))
        v0 = v0 ^ last
        v2 = v2 ^ _U(0xFF)
        for _ in range(4):
            v0, v1, v2, v3 = _sip_round(v0, v1, v2, v3)
        return v0 ^ v1 ^ v2 ^ v3


def legacy_hash64(blobs: list) -> np.ndarray:
    """TF's legacy Hash64 (tensorflow/core/lib/hash/hash.cc, a MurmurHash64A variant
    with seed 0xDECAFCAFFE) of each byte string, as uint64: the hash of the old
    StringToHashBucket."""
    buf, lens = _byte_matrix(blobs, 8)
    count = len(blobs)
    rows = np.arange(count)
    m = _U(0xC6A4A7935BD1E995)
    with np.errstate(over="ignore"):
        h = _U(0xDECAFCAFFE) ^ (lens.astype(_U) * m)
        blocks = lens // 8
        for j in range(int(blocks.max(initial=0))):
            act = j < blocks
            k = _fetch(buf, rows, np.full(count, 8 * j), 8) * m
            k = (k ^ (k >> _U(47))) * m
            h = np.where(act, (h ^ k) * m, h)
        tail = _fetch(buf, rows, blocks * 8, 8)   # the 0-7 leftover bytes, zero-padded
        h = np.where(lens % 8 > 0, (h ^ tail) * m, h)
        h = (h ^ (h >> _U(47))) * m
        return h ^ (h >> _U(47))


def _bucket_kernel(hash_fn):
    def kernel(inputs, attrs, ctx):
        x = np.asarray(inputs[0])
        blobs = [_utf8(s) for s in _flat(x)]
        if hash_fn is siphash24:
            key = [int(k) for k in attrs["key"]]
            hashes = siphash24(blobs, key[0], key[1])
        else:
            hashes = hash_fn(blobs)
        buckets = hashes % _U(int(attrs["num_buckets"]))
        return (buckets.astype(np.int64).reshape(x.shape),)
    return kernel


def _check_buckets(attrs) -> str | None:
    n = attrs["num_buckets"]
    if int(n) < 1:
        return f"num_buckets must be >= 1, got {n}"
    if "key" in attrs:
        key = attrs["key"]
        if key is None or len(key) != 2:
            return f"key must hold 2 integers (a 128-bit SipHash key), got {key!r}"
        if any(not -2 ** 63 <= int(k) < 2 ** 64 for k in key):
            return f"key entries must fit 64 bits, got {key!r}"
    return None


# --------------------------------------------------------------------------- StringFormat

def _float_text(v, dtype) -> str:
    """A float as TF's SummarizeValue writes it (absl/TF StrCat): %.6g for float32
    (%.9g when that does not round-trip), %.15g/%.17g for float64."""
    if np.isnan(v):
        return "nan" if not np.signbit(v) else "-nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    short, full = (6, 9) if dtype.itemsize <= 4 else (15, 17)
    text = "%.*g" % (short, v)
    if dtype.type(float(text)) != dtype.type(v):
        text = "%.*g" % (full, v)
    return text


def _element_text(v, dtype) -> str:
    if dtype.kind == "f":
        return _float_text(v, dtype)
    if dtype.kind == "b":
        return "1" if v else "0"
    if dtype.kind in "OUS":
        return '"' + _c_escape(_text(v)) + '"'
    return str(v)


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "'": "\\'", "\\": "\\\\"}


def _c_escape(s: str) -> str:
    """TF's Utf8SafeCEscape: quotes, backslashes and control characters escaped, the
    rest (UTF-8 included) kept."""
    return "".join(_ESCAPES.get(c) or (f"\\{ord(c):03o}" if ord(c) < 0x20 or c == "\x7f"
                                       else c) for c in s)


def _summarize(x: np.ndarray, summarize: int) -> str:
    """TF's Tensor::SummarizeValue(summarize, print_v2=True) as tf.strings.format uses
    it: nested [..] with spaces, rows on new lines indented by depth, and '...' in
    place of the middle of any dim longer than 2 * summarize (summarize -1: all)."""
    if x.ndim == 0:
        return _element_text(x.item() if x.dtype.kind != "O" else x[()], x.dtype)
    if x.size == 0:   # TF's spelling of empty tensors
        return "[]" if x.shape[0] == 0 else "[" + "\n" * (x.ndim - 1) + " ...]"

    def dims(arr, depth):
        n = arr.shape[0]
        if summarize >= 0 and n > 2 * summarize:
            idx = list(range(summarize)) + [None] + list(range(n - summarize, n))
        else:
            idx = list(range(n))
        if arr.ndim == 1:
            parts = ["..." if i is None else _element_text(arr[i], arr.dtype) for i in idx]
            return "[" + " ".join(parts) + "]"
        sep = "\n" * (arr.ndim - 1) + " " * (depth + 1)
        parts = ["..." if i is None else dims(arr[i], depth + 1) for i in idx]
        return "[" + sep.join(parts) + "]"
    return dims(x, 0)


def _check_format(attrs) -> str | None:
    if not attrs["placeholder"]:
        return "placeholder must not be empty"
    return None


def _format_kernel(inputs, attrs, ctx):
    """StringFormat: the template with each placeholder replaced by the next input
    summarised as TF prints tensors."""
    pieces = attrs["template"].split(attrs["placeholder"])
    if len(pieces) - 1 != len(inputs):
        raise ExecutionError(f"StringFormat: {len(pieces) - 1} placeholder(s) in the "
                             f"template for {len(inputs)} input(s)")
    out = [pieces[0]]
    for value, piece in zip(inputs, pieces[1:]):
        out.append(_summarize(np.asarray(value), int(attrs["summarize"])))
        out.append(piece)
    return (_obj(["".join(out)], ()),)


# --------------------------------------------------------------------------- registry

def _op(name, inputs, outputs, kernel, attrs=(), infer=None, check=None, doc=""):
    return define(name, inputs, outputs, kernel, attrs=attrs, infer=infer, domain=_D,
                  check_attrs=check, doc=doc)


_BUCKETS = ("num_buckets", "int")

OPS = (
    _op("AsString", ["X"], ["Y"], _as_string_kernel,
        attrs=[("precision", "int", -1), ("scientific", "int", 0), ("shortest", "int", 0),
               ("width", "int", -1), ("fill", "string", "")],
        infer=_same_shape_infer(object), check=_as_string_problem,
        doc="TF's AsString: numbers and bools as strings, printf-formatted."),
    _op("DecodeBase64", ["X"], ["Y"], _decode_base64_kernel, infer=_same_shape_infer(object),
        doc="TF's DecodeBase64 (web-safe alphabet, padding optional)."),
    _op("EncodeBase64", ["X"], ["Y"], _encode_base64_kernel, attrs=[("pad", "int", 0)],
        infer=_same_shape_infer(object), doc="TF's EncodeBase64 (web-safe alphabet)."),
    _op("ReduceJoin", ["X", "axes?"], ["Y"], _reduce_join_kernel,
        attrs=[("keep_dims", "int", 0), ("separator", "string", "")],
        infer=_reduce_join_infer, doc="TF's ReduceJoin."),
    _op("StaticRegexReplace", ["X"], ["Y"], _regex_replace_kernel,
        attrs=[("pattern", "string"), ("rewrite", "string"), ("replace_global", "int", 1)],
        infer=_same_shape_infer(object), check=_check_regex_replace,
        doc="TF's StaticRegexReplace (RE2 syntax and rewrite)."),
    _op("StringFormat", ["inputs*"], ["Y"], _format_kernel,
        attrs=[("template", "string", "%s"), ("placeholder", "string", "%s"),
               ("summarize", "int", 3)],
        infer=lambda attrs, inputs: [TensorInfo(_OBJ, ())], check=_check_format,
        doc="TF's StringFormat."),
    _op("StringJoin", ["inputs*"], ["Y"], _join_kernel, attrs=[("separator", "string", "")],
        infer=_join_infer, doc="TF's StringJoin."),
    _op("StringLength", ["X"], ["Y"], _length_kernel, attrs=[("unit", "string", "BYTE")],
        infer=_same_shape_infer(np.int32), check=_check_unit, doc="TF's StringLength."),
    _op("StringLower", ["X"], ["Y"], _case_kernel(_ASCII_LOWER, "lower"),
        attrs=[("encoding", "string", "")], infer=_same_shape_infer(object),
        check=_check_encoding, doc="TF's StringLower."),
    _op("StringStrip", ["X"], ["Y"], _strip_kernel, infer=_same_shape_infer(object),
        doc="TF's StringStrip (ASCII whitespace)."),
    _op("StringToHashBucket", ["X"], ["Y"], _bucket_kernel(legacy_hash64), attrs=[_BUCKETS],
        infer=_same_shape_infer(np.int64), check=_check_buckets,
        doc="TF's legacy StringToHashBucket (Hash64 mod num_buckets)."),
    _op("StringToHashBucketFast", ["X"], ["Y"], _bucket_kernel(fingerprint64),
        attrs=[_BUCKETS], infer=_same_shape_infer(np.int64), check=_check_buckets,
        doc="TF's StringToHashBucketFast (FarmHash Fingerprint64 mod num_buckets)."),
    _op("StringToHashBucketStrong", ["X"], ["Y"], _bucket_kernel(siphash24),
        attrs=[_BUCKETS, ("key", "ints")], infer=_same_shape_infer(np.int64),
        check=_check_buckets,
        doc="TF's StringToHashBucketStrong (SipHash-2-4 mod num_buckets)."),
    _op("StringToNumber", ["X"], ["Y"], _to_number_kernel, attrs=[("out_type", "int", 1)],
        infer=lambda attrs, inputs: [TensorInfo(np.dtype(_NUMBER_TYPES[attrs["out_type"]]),
                                                inputs[0].shape)],
        check=_check_out_type, doc="TF's StringToNumber."),
    _op("StringUpper", ["X"], ["Y"], _case_kernel(_ASCII_UPPER, "upper"),
        attrs=[("encoding", "string", "")], infer=_same_shape_infer(object),
        check=_check_encoding, doc="TF's StringUpper."),
    _op("Substr", ["X", "pos", "len"], ["Y"], _substr_kernel, attrs=[("unit", "string", "BYTE")],
        infer=_substr_infer, check=_check_unit, doc="TF's Substr."),
)

KNOWN_FAILURES: dict[str, str] = {}

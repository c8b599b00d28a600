"""TF1's string functions: og.as_string, og.string_join, og.reduce_join,
og.string_strip, og.string_to_number, og.substr, og.regex_replace,
og.regex_full_match, og.encode_base64 / og.decode_base64, og.string_to_hash_bucket
(and _fast, _strong), and the `strings` namespace with tf.strings' TF1 names
(length, lower, upper, strip, join, reduce_join, regex_full_match, regex_replace,
substr, to_number, to_hash_bucket[_fast|_strong], as_string, format).

Names, argument order and defaults are tf.compat.v1's; the ops are the onegraph
domain's TF string ops (ops/strings_tf.py, which says how onegraph's str stands for
TF's bytes), except regex_full_match, which is ONNX's RegexFullMatch and so exports.
Arguments TF checks when the kernel is built (a bad fill, an invalid regex, a
num_buckets < 1) are refused here while building; what depends on the data (a string
that is no number, a pos past the end of a string, bad base64) raises ExecutionError
when the graph runs, naming the string, as TF raises InvalidArgumentError. A graph
with onegraph-domain string ops saves to .og and runs in og.Session; ONNX export
refuses them (ConversionError naming the op), since ONNX has no such ops.

string_split and strings.split give SparseTensors (train/api_sparse.py). Skipped, as
they return RaggedTensor values og does not have: strings.ngrams, strings.bytes_split,
strings.unicode_decode / unicode_decode_with_offsets / unicode_split /
unicode_split_with_offsets, strings.unicode_encode / unicode_transcode /
unicode_script.
"""

from __future__ import annotations

import types

import numpy as np

from ..errors import OpAttributeError, ShapeError
from ..format import DType
from ..ops.regex_re2 import PatternError
from . import api
from . import graph as _g
from .api import _bool_arg, _int_arg, _t
from .graph import Tensor

_D = "onegraph"
_UNITS = ("BYTE", "UTF8_CHAR")
_NUMBER_OUT = (DType.FLOAT32, DType.FLOAT64, DType.INT32, DType.INT64)
_AS_STRING_IN = (DType.INT8, DType.INT16, DType.INT32, DType.INT64, DType.UINT8,
                 DType.UINT16, DType.UINT32, DType.UINT64, DType.FLOAT16, DType.FLOAT32,
                 DType.FLOAT64, DType.BOOL, DType.STRING)


# --------------------------------------------------------------------------- helpers

def _strings(x, what: str) -> Tensor:
    """x as a string tensor (Python str, bytes and lists of them become constants).

    Raises:
        TypeError: x is a tensor of another dtype.
    """
    t = x if isinstance(x, Tensor) else _t(x)
    if t.dtype is not DType.STRING:
        raise TypeError(f"{what} must be a string tensor, got {t.dtype.short_name} "
                        f"{t.name!r}")
    return t


def _str_arg(value, what: str) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__} {value!r:.60}")
    return value


def _unit(unit, what: str) -> str:
    unit = _str_arg(unit, f"{what}: unit")
    if unit not in _UNITS:
        raise ValueError(f"{what}: unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    return unit


def _op(op_type: str, inputs: list, attrs: dict, name, what: str, domain: str = _D):
    _g.check_name(name, what)
    return inputs[0].graph.op(op_type, inputs, attrs, name=name or what, domain=domain)


def _unary(op_type: str, x, attrs: dict, name, what: str) -> Tensor:
    return _op(op_type, [_strings(x, f"{what}: input")], attrs, name, what)


# --------------------------------------------------------------------------- conversions

def as_string(input, precision=-1, scientific=False, shortest=False,  # noqa: A002
              width=-1, fill="", name=None) -> Tensor:
    """Each element of a numeric, bool or string tensor as a string (tf.as_string):
    printf's %d for integers; %f, %e (scientific) or %g (shortest) for floats, with
    `precision` digits (-1: printf's default 6); padded to `width` with `fill` (one
    of ' ', '+', '-', '0', '#', printf's flags: '0' pads numbers with zeros, '-'
    left-justifies, '+' always signs); bools are "true"/"false" (no padding), strings
    are padded only. inf and nan are written as C writes them ("-nan" for a NaN with
    its sign bit set), padded with spaces.

        og.as_string(og.constant([3.14159, -2.5]), precision=2)  # ["3.14", "-2.50"]

    Raises:
        TypeError: input is of an unsupported dtype (complex), or an argument has the
            wrong type.
        ValueError: fill is longer than one character or not a printf flag, both
            scientific and shortest are set, or precision/scientific/shortest are given
            for an integer or bool input.
    """
    what = "as_string"
    x = _t(input)
    if x.dtype not in _AS_STRING_IN:
        raise TypeError(f"{what}: input of dtype {x.dtype.short_name} is not supported")
    attrs = {"precision": _int_arg(precision, f"{what}: precision"),
             "scientific": int(_bool_arg(scientific, f"{what}: scientific")),
             "shortest": int(_bool_arg(shortest, f"{what}: shortest")),
             "width": _int_arg(width, f"{what}: width"), "fill": _str_arg(fill, f"{what}: fill")}
    from ..ops.strings_tf import _as_string_format, _as_string_problem

    problem = _as_string_problem(attrs)
    try:
        if problem:
            raise OpAttributeError(problem)
        _as_string_format(attrs, x.dtype.numpy.kind, x.dtype.short_name)
    except OpAttributeError as e:
        raise ValueError(f"{what}: {str(e).replace('AsString: ', '')}") from None
    return _op("AsString", [x], attrs, name, what)


def string_to_number(string_tensor, out_type=DType.FLOAT32, name=None) -> Tensor:
    """Each string parsed as a number of `out_type` (tf.string_to_number): floats
    accept surrounding ASCII whitespace, a sign, decimal or 0x-hex digits with an
    exponent, inf/infinity/nan in any case (out of range: +-inf); integers accept
    whitespace, a sign and decimal digits within range.

    Raises:
        TypeError: string_tensor is not a string tensor, or out_type is not float32,
            float64, int32 or int64.
        ExecutionError: (when run) a string does not parse; the message names it.
    """
    what = "string_to_number"
    x = _strings(string_tensor, f"{what}: string_tensor")
    out = _g.as_dtype(out_type)
    if out not in _NUMBER_OUT:
        raise TypeError(f"{what}: out_type must be float32, float64, int32 or int64, got "
                        f"{out.short_name}")
    return _op("StringToNumber", [x], {"out_type": api.onnx_type(out)}, name, what)


# --------------------------------------------------------------------------- joins

def string_join(inputs, separator="", name=None) -> Tensor:
    """The strings of `inputs` joined elementwise with `separator` (tf.string_join).
    The tensors must have one shape; scalars are repeated to it (TF's only
    broadcasting). An empty list gives the scalar "".

    Raises:
        TypeError: inputs is not a list, or holds a non-string tensor.
        ShapeError: two non-scalar inputs have different known shapes (unknown ones
            are checked when the graph runs: ExecutionError).
    """
    what = "string_join"
    if not isinstance(inputs, (list, tuple)):
        raise TypeError(f"{what}: inputs must be a list of string tensors, got "
                        f"{type(inputs).__name__}")
    sep = _str_arg(separator, f"{what}: separator")
    if not inputs:
        _g.check_name(name, what)
        return api.constant("", dtype=DType.STRING, name=name)
    graph = api._graph_of(*inputs)
    ts = [_strings(v if isinstance(v, Tensor) else _t(v, graph=graph), f"{what}: inputs[{k}]")
          for k, v in enumerate(inputs)]
    return _op("StringJoin", ts, {"separator": sep}, name, what)


def reduce_join(inputs, axis=None, keep_dims=None, separator="", name=None,
                reduction_indices=None, keepdims=None) -> Tensor:
    """Join the strings of `inputs` along `axis` (tf.reduce_join): None joins all
    axes in row-major order; with a list, TF's order: the first listed axis varies
    fastest (axis=[0, 1] of [["a", "b"], ["c", "d"]] gives "acbd", [1, 0] "abcd"), and
    [] joins nothing. A joined axis of length 0 gives "".

    Raises:
        TypeError: inputs is not a string tensor, or axis is not an int, a list of
            ints or an integer tensor.
        ValueError: both axis and reduction_indices (or keep_dims and keepdims) are
            given with different values.
        ShapeError: an axis is out of range or repeated (known rank).
    """
    what = "reduce_join"
    x = _strings(inputs, f"{what}: inputs")
    if reduction_indices is not None:
        if axis is not None:
            raise ValueError(f"{what}: give axis or reduction_indices, not both")
        axis = reduction_indices
    if keepdims is not None:
        if keep_dims is not None and bool(keep_dims) != bool(keepdims):
            raise ValueError(f"{what}: keep_dims and keepdims disagree")
        keep_dims = keepdims
    keep = _bool_arg(bool(keep_dims) if keep_dims is None else keep_dims,
                     f"{what}: keep_dims")
    attrs = {"keep_dims": int(keep), "separator": _str_arg(separator, f"{what}: separator")}
    g = x.graph
    if axis is None:
        axes = None
    elif isinstance(axis, Tensor):
        if axis.dtype not in (DType.INT32, DType.INT64):
            raise TypeError(f"{what}: axis must be an integer tensor, got "
                            f"{axis.dtype.short_name}")
        axes = g.op("Reshape", [api.cast(axis, DType.INT64), g.constant(np.asarray([-1]))])
    else:
        values = api._axes(axis, f"{what}: axis")
        axes = g.constant(np.asarray(values, dtype=np.int64).reshape(-1))
    return _op("ReduceJoin", [x, axes], attrs, name, what)


# --------------------------------------------------------------------------- per string

def string_strip(input, name=None) -> Tensor:  # noqa: A002
    """Each string without leading and trailing ASCII whitespace (tf.string_strip;
    other Unicode spaces are kept, as TF keeps them).

    Raises:
        TypeError: input is not a string tensor.
    """
    return _unary("StringStrip", input, {}, name, "string_strip")


def length(input, name=None, unit="BYTE") -> Tensor:  # noqa: A002
    """Each string's length in UTF-8 bytes (unit "BYTE") or characters ("UTF8_CHAR"),
    int32 (tf.strings.length).

    Raises:
        TypeError: input is not a string tensor.
        ValueError: unit is neither "BYTE" nor "UTF8_CHAR".
    """
    return _unary("StringLength", input, {"unit": _unit(unit, "strings.length")}, name,
                  "strings.length")


def _case(op_type: str, input, encoding, name, what: str) -> Tensor:  # noqa: A002
    enc = _str_arg(encoding, f"{what}: encoding")
    if enc.lower().replace("_", "-") in ("utf-8", "utf8"):
        enc = "utf-8"
    if enc not in ("", "utf-8"):
        raise ValueError(f"{what}: only utf-8 or '' (no encoding) is supported, received "
                         f"{encoding!r}")
    return _unary(op_type, input, {"encoding": enc}, name, what)


def lower(input, encoding="", name=None) -> Tensor:  # noqa: A002
    """Each string in lower case (tf.strings.lower): ASCII letters only with encoding
    '' (TF1's default), full Unicode case mapping with "utf-8" ('İ' -> 'i̇', final
    sigma).

    Raises:
        TypeError: input is not a string tensor.
        ValueError: encoding is neither '' nor "utf-8".
    """
    return _case("StringLower", input, encoding, name, "strings.lower")


def upper(input, encoding="", name=None) -> Tensor:  # noqa: A002
    """Each string in upper case (tf.strings.upper): ASCII letters only with encoding
    '', full Unicode case mapping with "utf-8" ('ß' -> 'SS').

    Raises:
        TypeError: input is not a string tensor.
        ValueError: encoding is neither '' nor "utf-8".
    """
    return _case("StringUpper", input, encoding, name, "strings.upper")


def substr(input, pos, len, name=None, unit="BYTE") -> Tensor:  # noqa: A002
    """Substrings of `len` bytes (or UTF-8 characters) from `pos` (tf.substr). A
    negative pos counts from the end; len past the end stops there; a negative len
    means "to the end" in bytes and "" in characters, as TF's. pos and len have one
    shape (ints, or int32/int64 tensors): input's, a scalar's, or one input broadcasts
    with (numpy rules). Python ints become int32, or int64 where one does not fit
    int32 (as TF converts them); pos and len of different types are both taken as
    int64. Cutting a character in bytes gives a str with surrogate escapes for the
    stray bytes (see ops/strings_tf.py).

    Raises:
        TypeError: input is not a string tensor, or pos/len are not integers (floats,
            bools, None, a ragged list).
        ValueError: unit is neither "BYTE" nor "UTF8_CHAR", or a pos/len value does
            not fit int64.
        ShapeError: pos and len have different known shapes, or do not broadcast with
            input.
        ExecutionError: (when run) |pos| exceeds a string's length; the message names
            the string and its index.
    """
    what = "substr"
    x = _strings(input, f"{what}: input")
    u = _unit(unit, what)
    g = x.graph
    p_t, l_t = (v if isinstance(v, Tensor) else g.constant(_index_array(v, f"{what}: {arg}"))
                for arg, v in (("pos", pos), ("len", len)))
    for arg, t in (("pos", p_t), ("len", l_t)):
        if t.dtype not in (DType.INT32, DType.INT64):
            raise TypeError(f"{what}: {arg} must be int32 or int64, got {t.dtype.short_name}")
    # TF needs one type; the kernel does not care. Widen (never narrow: an int64 pos
    # cast to int32 would wrap around and cut somewhere else).
    if p_t.dtype != l_t.dtype:
        p_t, l_t = (t if t.dtype == DType.INT64 else api.cast(t, DType.INT64)
                    for t in (p_t, l_t))
    ps, ls = p_t.shape, l_t.shape
    if ps is not None and ls is not None and (builtins_len(ps) != builtins_len(ls) or any(
            a is not None and b is not None and a != b for a, b in zip(ps, ls))):
        raise ShapeError(f"{what}: pos and len should have the same shape, got: "
                         f"{list(p_t.shape)} vs. {list(l_t.shape)}")
    return _op("Substr", [x, p_t, l_t], {"unit": u}, name, what)


builtins_len = len
_INT32 = np.iinfo(np.int32)
_INT64 = np.iinfo(np.int64)


def _index_array(value, what: str) -> np.ndarray:
    """A Python int (or nested list of ints, or integer numpy array) given for substr's
    pos or len, as TF converts it: int32 when every value fits, else int64.

    Raises:
        TypeError: value holds something other than ints (floats, bools, None, str, a
            ragged list).
        ValueError: a value does not fit int64 (TF cannot convert it either).
    """
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype.kind not in "iu":
            raise TypeError(f"{what} must be int32 or int64, got {array.dtype}")
        items = array.reshape(-1).tolist()
    else:
        # dtype=object keeps Python ints exact (numpy would turn [-1, 2**63] into
        # floats and refuse 2**70) and a ragged list as lists, refused below.
        try:
            array = np.asarray(value, dtype=object)
        except ValueError:
            raise TypeError(f"{what} must be an int or a rectangular list of ints, got "
                            f"{api._brief(value)}") from None
        items = array.reshape(-1).tolist()
        bad = [v for v in items if isinstance(v, bool) or not isinstance(v, int)]
        if bad:
            raise TypeError(f"{what} must be int32 or int64 (ints), got "
                            f"{type(bad[0]).__name__} {api._brief(bad[0])}")
    huge = next((v for v in items if not _INT64.min <= v <= _INT64.max), None)
    if huge is not None:
        raise ValueError(f"{what} value {huge} does not fit int64")
    lo, hi = min(items, default=0), max(items, default=0)
    dtype = np.int32 if _INT32.min <= lo and hi <= _INT32.max else np.int64
    return np.asarray(items, dtype=dtype).reshape(array.shape)


# --------------------------------------------------------------------------- regexes

def regex_replace(input, pattern, rewrite, replace_global=True, name=None) -> Tensor:  # noqa: A002
    """Replace the matches of the RE2 `pattern` in each string with `rewrite`
    (tf.regex_replace): `\\1`..`\\9` insert groups, `\\0` the whole match, `\\\\` a
    backslash; every non-overlapping match with replace_global, else the first. An
    empty match right after a match is skipped, as RE2 does.

    Raises:
        TypeError: input is not a string tensor, or pattern/rewrite are not str
            (og takes them while building; TF's tensor patterns are not supported).
        OpAttributeError: the pattern is not valid RE2 (or uses what og's engine
            lacks: \\p classes, \\C), or the rewrite has another escape or a group the
            pattern lacks (TF then silently leaves strings alone or drops text).
    """
    what = "regex_replace"
    x = _strings(input, f"{what}: input")
    attrs = {"pattern": _str_arg(pattern, f"{what}: pattern"),
             "rewrite": _str_arg(rewrite, f"{what}: rewrite"),
             "replace_global": int(_bool_arg(replace_global, f"{what}: replace_global"))}
    return _op("StaticRegexReplace", [x], attrs, name, what)


def regex_full_match(input, pattern, name=None) -> Tensor:  # noqa: A002
    """Whether each whole string matches the RE2 `pattern` (tf.strings.regex_full_match;
    ONNX's RegexFullMatch, so it exports).

    Raises:
        TypeError: input is not a string tensor, or pattern is not a str.
        OpAttributeError: the pattern is not valid RE2 (or uses what og's engine lacks).
    """
    what = "regex_full_match"
    x = _strings(input, f"{what}: input")
    p = _str_arg(pattern, f"{what}: pattern")
    from ..ops.strings import _regex_engine

    compile_pattern, error = _regex_engine()
    errors = (error if isinstance(error, tuple) else (error,)) + (PatternError,)
    try:
        compile_pattern(p)
    except errors as e:
        raise OpAttributeError(f"{what}: invalid pattern {p!r}: {e}") from None
    return _op("RegexFullMatch", [x], {"pattern": p}, name, what, domain="")


# --------------------------------------------------------------------------- base64

def encode_base64(input, pad=False, name=None) -> Tensor:  # noqa: A002
    """Each string's UTF-8 bytes in web-safe base64 ('-' and '_' for '+' and '/'),
    '=' padded only with pad (tf.encode_base64).

    Raises:
        TypeError: input is not a string tensor or pad not a bool.
    """
    return _unary("EncodeBase64", input, {"pad": int(_bool_arg(pad, "encode_base64: pad"))},
                  name, "encode_base64")


def decode_base64(input, name=None) -> Tensor:  # noqa: A002
    """Each web-safe base64 string decoded (tf.decode_base64); padding is optional.
    Bytes that are not UTF-8 come out as str with surrogate escapes.

    Raises:
        TypeError: input is not a string tensor.
        ExecutionError: (when run) a string is not web-safe base64 (a character
            outside the alphabet, misplaced '=', a length of 1 modulo 4).
    """
    return _unary("DecodeBase64", input, {}, name, "decode_base64")


# --------------------------------------------------------------------------- hashing

def _buckets(num_buckets, what: str) -> int:
    n = _int_arg(num_buckets, f"{what}: num_buckets")
    if n < 1:
        raise ValueError(f"{what}: num_buckets must be >= 1, got {n}")
    return n


def string_to_hash_bucket_fast(input, num_buckets, name=None) -> Tensor:  # noqa: A002
    """FarmHash Fingerprint64 of each string's UTF-8 bytes modulo num_buckets, int64
    (tf.string_to_hash_bucket_fast; bit-exact with TF).

    Raises:
        TypeError: input is not a string tensor or num_buckets not an int.
        ValueError: num_buckets < 1.
    """
    what = "string_to_hash_bucket_fast"
    return _unary("StringToHashBucketFast", input, {"num_buckets": _buckets(num_buckets, what)},
                  name, what)


def string_to_hash_bucket_strong(input, num_buckets, key, name=None) -> Tensor:  # noqa: A002
    """Keyed SipHash-2-4 of each string's UTF-8 bytes modulo num_buckets, int64
    (tf.string_to_hash_bucket_strong; bit-exact with TF). key is two ints, the
    128-bit key's low and high 64-bit halves (negative ints are their two's complement).

    Raises:
        TypeError: input is not a string tensor, num_buckets not an int, or key not a
            list of ints.
        ValueError: num_buckets < 1, key has not 2 entries, or one does not fit 64 bits.
    """
    what = "string_to_hash_bucket_strong"
    keys = api._int_list(key, f"{what}: key")
    if builtins_len(keys) != 2:
        raise ValueError(f"{what}: key must hold 2 integers, got {keys}")
    if any(not -2 ** 63 <= k < 2 ** 64 for k in keys):
        raise ValueError(f"{what}: key entries must fit 64 bits, got {keys}")
    keys = [k - 2 ** 64 if k >= 2 ** 63 else k for k in keys]   # stored as int64
    return _unary("StringToHashBucketStrong", input,
                  {"num_buckets": _buckets(num_buckets, what), "key": keys}, name, what)


def string_to_hash_bucket(string_tensor, num_buckets, name=None) -> Tensor:
    """TF's legacy Hash64 of each string's UTF-8 bytes modulo num_buckets, int64
    (tf.string_to_hash_bucket; bit-exact with TF, whose docs recommend the _fast one).

    Raises:
        TypeError: string_tensor is not a string tensor or num_buckets not an int.
        ValueError: num_buckets < 1.
    """
    what = "string_to_hash_bucket"
    return _unary("StringToHashBucket", string_tensor,
                  {"num_buckets": _buckets(num_buckets, what)}, name, what)


# --------------------------------------------------------------------------- format

def format(template, inputs, placeholder="{}", summarize=3, name=None) -> Tensor:  # noqa: A001
    """A scalar string: `template` with each `placeholder` replaced by the next input
    printed as TF prints tensors (tf.strings.format): "[1 2 3]", nested rows on new
    lines, strings quoted, floats in their shortest round-tripping %g form, and only
    the first and last `summarize` entries of each axis around "..." (-1: all).

    Raises:
        TypeError: template or placeholder are not str, or summarize not an int.
        ValueError: the template's placeholders do not match the number of inputs.
    """
    what = "strings.format"
    tmpl = _str_arg(template, f"{what}: template")
    ph = _str_arg(placeholder, f"{what}: placeholder")
    if not ph:
        raise ValueError(f"{what}: placeholder must not be empty")
    count = _int_arg(summarize, f"{what}: summarize")
    items = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if tmpl.count(ph) != builtins_len(items):
        raise ValueError(f"{what}: {tmpl.count(ph)} placeholder(s) {ph!r} in the template "
                         f"for {builtins_len(items)} input(s)")
    _g.check_name(name, what)
    graph = api._graph_of(*items)
    ts = [v if isinstance(v, Tensor) else _t(v, graph=graph) for v in items]
    return graph.op("StringFormat", ts, {"template": tmpl, "placeholder": ph,
                                         "summarize": count},
                    name=name or "StringFormat", domain=_D)


# --------------------------------------------------------------------------- tf.strings

def _strings_namespace() -> types.ModuleType:
    """og.strings: tf.strings' TF1 names for the functions here."""
    names = {"as_string": as_string, "format": format, "join": string_join,
             "length": length, "lower": lower, "reduce_join": reduce_join,
             "regex_full_match": regex_full_match, "regex_replace": regex_replace,
             "strip": string_strip, "substr": substr, "to_hash_bucket": string_to_hash_bucket,
             "to_hash_bucket_fast": string_to_hash_bucket_fast,
             "to_hash_bucket_strong": string_to_hash_bucket_strong,
             "to_number": string_to_number, "upper": upper}
    from .api_sparse import strings_split  # (api_sparse builds on the core API too)
    names["split"] = strings_split
    ns = types.ModuleType("onegraph.strings", "TF1's tf.strings names over og's string "
                          "functions (" + ", ".join(sorted(names)) + ").")
    for key, fn in names.items():
        setattr(ns, key, fn)
    ns.__all__ = sorted(names)
    return ns


strings = _strings_namespace()


__all__ = [
    "as_string", "decode_base64", "encode_base64", "reduce_join", "regex_full_match",
    "regex_replace", "string_join", "string_strip", "string_to_hash_bucket",
    "string_to_hash_bucket_fast", "string_to_hash_bucket_strong", "string_to_number",
    "strings", "substr",
]

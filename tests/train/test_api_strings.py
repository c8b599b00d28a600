"""og's TF1 string functions (onegraph.train.api_strings) against TensorFlow: the cases
of tf1_strings_cases.py, recorded in data/tf1_strings_reference.npz by
`tools/record_tf1_reference.py strings` (TensorFlow 2.21's tf.compat.v1), string
outputs stored as fixed-width unicode with TF's non-UTF-8 bytes surrogate-escaped;
plus run-time errors (their TF messages quoted), ONNX export and an .og round trip.
"""

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ConversionError, ExecutionError, OpAttributeError, ShapeError
from onegraph.ops.strings_tf import fingerprint64, legacy_hash64, siphash24
from onegraph.train import api_strings as S

from . import tf1_reference
from .tf1_strings_cases import CASES, make_inputs


@pytest.fixture(scope="module")
def reference():
    return tf1_reference.load("strings")


@pytest.fixture
def string_functions(monkeypatch):
    """tf1_reference resolves the cases' names in api_strings (og.<name> and og.strings
    are not wired into og's namespace yet)."""
    def function(path):
        fn = S
        for part in path.split("."):
            fn = getattr(fn, part)
        return fn
    monkeypatch.setattr(tf1_reference, "function", function)


def _as_text(a: np.ndarray) -> list:
    return [str(v) for v in np.asarray(a).reshape(-1)]


def test_reference_inputs_are_the_cases_inputs(reference):
    for key, value in make_inputs().items():
        np.testing.assert_array_equal(reference[f"in/{key}"], value)
    assert {c[0] for c in CASES} == {k[4:] for k in reference if k.startswith("out/")}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow(reference, string_functions, case):
    name = case[0]
    (got,), _ = tf1_reference.run_case(reference, case)
    want = reference[f"out/{name}"]
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind == "U":
        assert got.dtype == object
        assert _as_text(got) == _as_text(want)
    else:   # numbers, bools and hash buckets: exact (NaN where TF has NaN)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want)


def test_hashes_cover_every_length_class_bit_exactly(reference):
    """Fingerprint64, SipHash-2-4 and Hash64 of 606 strings of byte lengths 0..382
    (all of FarmHash's classes 0-16, 17-32, 33-64, >64 with 1 to 5 rounds of its 64-byte
    loop, multi-byte UTF-8, inner NULs) equal TF's modulo 2^63 - 1, i.e. in all but the
    top bit."""
    strings = reference["in/hs"]
    blobs = [s.encode("utf-8") for s in strings.tolist()]
    lengths = {len(b) for b in blobs}
    assert set(range(301)) <= lengths and max(lengths) > 320
    big = np.uint64(2 ** 63 - 1)
    got = {"hash_fast": fingerprint64(blobs) % big,
           "hash_strong": siphash24(blobs, 123456789, -987654321) % big,
           "hash_legacy": legacy_hash64(blobs) % big}
    for name, values in got.items():
        want = reference[f"out/{name}"]
        assert want.size == 606
        np.testing.assert_array_equal(values.astype(np.int64), want, err_msg=name)


def test_known_fingerprints():
    # FarmHash's own test values (farmhash.cc, Fingerprint64 of "" is k2)
    assert int(fingerprint64([b""])[0]) == 0x9AE16A3B2F90404F
    # the bytes a str stands for: fed bytes hash as themselves
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.string, [2])
        h = S.string_to_hash_bucket_fast(x, 2 ** 62)
        got = og.Session(g).run(h, {x: np.array([b"\xff\xfe", "\udcff\udcfe"], object)})
    assert got[0] == got[1] == int(fingerprint64([b"\xff\xfe"])[0]) % 2 ** 62


def _run(build, feeds=None):
    g = og.Graph()
    with g.as_default():
        out, feed = build()
        return og.Session(g).run(out, feed or {})


# TF 2.21 messages quoted: "StringToNumberOp could not correctly convert string: 1.5abc",
# "pos 6 out of range for string b'hello' at index 0", "Invalid character found in
# base64.", "Base64 string length cannot be 1 modulo 4.", "Input shapes do not match:
# [2,3] vs. [3]", "pos and len should have the same shape, got: [2] vs. []".
@pytest.mark.parametrize("fn, values, extra, pattern", [
    (S.string_to_number, ["1.5", "1.5abc"], {}, r"convert string: '1\.5abc'"),
    (S.string_to_number, ["12", ""], {"out_type": og.int32}, r"convert string: ''"),
    (S.string_to_number, ["2147483648"], {"out_type": og.int32}, "2147483648"),
    (S.string_to_number, ["1.5"], {"out_type": og.int64}, r"'1\.5' \(to int64\)"),
    (S.string_to_number, ["+-1"], {}, r"'\+-1'"),
    (S.decode_base64, ["YQ", "Pz8+Pg"], {}, r"Invalid character.*'Pz8\+Pg' at index 1"),
    (S.decode_base64, ["YWJj\n"], {}, "cannot be 1 modulo 4"),
    (S.decode_base64, ["YQ="], {}, "Invalid character"),
])
def test_run_time_errors_name_the_string(fn, values, extra, pattern):
    def build():
        x = og.placeholder(og.string, [None])
        return fn(x, **extra), {x: np.array(values, object)}
    with pytest.raises(ExecutionError, match=pattern):
        _run(build)


@pytest.mark.parametrize("values, pos, unit, pattern", [
    (["hello", "héllo"], 6, "BYTE", r"pos 6 out of range for string 'hello' at index 0"),
    (["héllo", "hello"], 6, "BYTE", r"out of range for string 'hello' at index 1"),  # 6 bytes
    (["hello!", "héllo"], -6, "UTF8_CHAR", r"pos -6 out of range for string 'héllo' at "
                                           r"index 1"),
    (["", "x"], -1, "BYTE", r"pos -1 out of range for string '' at index 0"),
])
def test_substr_out_of_range_is_a_run_time_error(values, pos, unit, pattern):
    def build():
        x = og.placeholder(og.string, [2])
        return S.substr(x, pos, 1, unit=unit), {x: np.array(values, object)}
    with pytest.raises(ExecutionError, match=pattern):
        _run(build)


def test_shapes_known_only_at_run_time_are_checked_then():
    def join():
        a, b = og.placeholder(og.string, None), og.placeholder(og.string, None)
        return S.string_join([a, b]), {a: np.array([["x"] * 3] * 2), b: np.array(["y"] * 3)}
    with pytest.raises(ExecutionError, match=r"shapes do not match: \[2, 3\] vs\. \[3\]"):
        _run(join)

    def substr():
        x, p = og.placeholder(og.string, None), og.placeholder(og.int32, None)
        return S.substr(x, p, og.constant(1)), {x: np.array(["ab", "cd"]), p: np.array([0, 1])}
    with pytest.raises(ExecutionError, match="pos and len should have the same shape"):
        _run(substr)

    def reduce():
        x, axes = og.placeholder(og.string, None), og.placeholder(og.int32, None)
        return S.reduce_join(x, axes), {x: np.array([["a", "b"]]), axes: np.array([0, -2])}
    with pytest.raises(ExecutionError, match="duplicate reduction dimension 0"):
        _run(reduce)


def test_bad_arguments_are_refused_while_building():
    g = og.Graph()
    with g.as_default():
        s = og.constant(["a", "b"])
        f = og.constant([1.5])
        with pytest.raises(ValueError, match="Fill argument not supported"):
            S.as_string(f, fill="x")
        with pytest.raises(ValueError, match="one or fewer characters"):
            S.as_string(f, fill="00")
        with pytest.raises(ValueError, match="both scientific and shortest"):
            S.as_string(f, scientific=True, shortest=True)
        with pytest.raises(ValueError, match="precision not supported for datatype int32"):
            S.as_string(og.constant([1], og.int32), precision=2)
        with pytest.raises(TypeError, match="must be a string tensor"):
            S.string_strip(f)
        with pytest.raises(TypeError, match="out_type"):
            S.string_to_number(s, out_type=og.int8)
        with pytest.raises(ShapeError, match="do not match"):
            S.string_join([s, og.constant(["a", "b", "c"])])
        with pytest.raises(ShapeError, match="invalid reduction dimension 2"):
            S.reduce_join(og.constant([["a"]]), 2)
        with pytest.raises(ShapeError, match="duplicate reduction dimension"):
            S.reduce_join(og.constant([["a"]]), [0, -2])
        with pytest.raises(ShapeError, match="same shape"):
            S.substr(s, [0, 1], 2)
        with pytest.raises(ValueError, match="unit"):
            S.strings.length(s, unit="CHAR")
        with pytest.raises(ValueError, match="utf-8"):
            S.strings.lower(s, encoding="latin1")
        with pytest.raises(ValueError, match="num_buckets must be >= 1"):
            S.string_to_hash_bucket_fast(s, 0)
        with pytest.raises(ValueError, match="2 integers"):
            S.string_to_hash_bucket_strong(s, 10, [1])
        with pytest.raises(ValueError, match="placeholder"):
            S.strings.format("{} {}", [s])
        # RE2 refuses what Python's re would run; and og's rewrite checks
        for pattern in ["(?=a)", r"(a)\1", "a++", "(?>a)", r"\Z", "["]:
            with pytest.raises(OpAttributeError, match="invalid pattern"):
                S.regex_replace(s, pattern, "x")
            with pytest.raises(OpAttributeError, match="invalid pattern"):
                S.regex_full_match(s, pattern)
        with pytest.raises(OpAttributeError, match=r"uses \\2"):
            S.regex_replace(s, "(a)", r"\2")
        with pytest.raises(OpAttributeError, match="invalid rewrite"):
            S.regex_replace(s, "(a)", r"\x")


def test_bytes_that_are_not_utf8_are_surrogate_escaped():
    """A byte substr cutting 'é' gives TF's bytes b'h\\xc3' as 'h\\udcc3'; its length,
    hash and base64 are those of the bytes, and decoding base64 gives them back."""
    def build():
        x = og.constant(["héllo"])
        cut = S.substr(x, 0, 2)
        return [cut, S.strings.length(cut), S.strings.length(cut, unit="UTF8_CHAR"),
                S.decode_base64(S.encode_base64(cut)), S.substr(cut, 1, 1, unit="UTF8_CHAR")], None
    cut, n, chars, back, tail = _run(build)
    assert cut[0] == "h\udcc3" and cut[0].encode("utf-8", "surrogateescape") == b"h\xc3"
    assert n[0] == 2 and chars[0] == 2 and back[0] == cut[0] and tail[0] == "\udcc3"


def test_strings_namespace_has_tf1_names():
    assert set(S.strings.__all__) == {
        "as_string", "format", "join", "length", "lower", "reduce_join", "regex_full_match",
        "regex_replace", "split", "strip", "substr", "to_hash_bucket", "to_hash_bucket_fast",
        "to_hash_bucket_strong", "to_number", "upper"}
    assert S.strings.join is S.string_join and S.strings.to_number is S.string_to_number


def _string_graph():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.string, [None], name="x")
        outs = {"joined": S.string_join([S.strings.upper(x), "!"], separator="-"),
                "buckets": S.string_to_hash_bucket_strong(x, 97, [1, 2]),
                "fixed": S.regex_replace(x, r"(\w)(\w)", r"\2\1"),
                "matches": S.regex_full_match(x, r"[a-z]+")}
    return g, x, outs


def test_graph_round_trips_through_og_file(tmp_path):
    g, x, outs = _string_graph()
    feed = np.array(["abc", "héllo wörld", ""], object)
    want = og.Session(g).run(list(outs.values()), {x: feed})
    path = str(tmp_path / "strings.og")
    og.save(g, path, signatures={"serving": og.signature({"x": x}, outs)})
    got = og.Session(og.load(path)).run_signature("serving", x=feed)
    for key, w in zip(outs, want):
        assert got[key].dtype == w.dtype, key
        np.testing.assert_array_equal(got[key], w, err_msg=key)
    assert want[0].tolist() == ["ABC-!", "HéLLO WöRLD-!", "-!"]


def test_onnx_export_refuses_onegraph_string_ops_but_exports_regex_full_match():
    from onegraph.convert import to_onnx

    g, x, outs = _string_graph()
    with pytest.raises(ConversionError, match="StringJoin|StringUpper"):
        to_onnx(g, signatures={"serving": og.signature({"x": x}, outs)})
    proto = to_onnx(g, signatures={"serving": og.signature({"x": x},
                                                             {"m": outs["matches"]})})
    assert {n.op_type for n in proto.graph.node} <= {"RegexFullMatch", "Identity"}
    assert "RegexFullMatch" in {n.op_type for n in proto.graph.node}
    ort = pytest.importorskip("onnxruntime")
    try:
        session = ort.InferenceSession(proto.SerializeToString(),
                                       providers=["CPUExecutionProvider"])
    except Exception as e:  # an onnxruntime without the op (before 1.17)
        pytest.skip(f"onnxruntime cannot load RegexFullMatch: {e}")
    feed = np.array(["abc", "Abc", "١٢٣", "a1"], object)
    (got,) = session.run(None, {"x": feed})
    np.testing.assert_array_equal(got, [True, False, False, False])


def test_fuzz_findings_a_backtracking_pattern_and_a_huge_width_do_not_hang():
    # regex_replace runs RE2 (linear time) when google-re2 is installed, as
    # regex_full_match does; "(a+)+$" took exponential time in Python's re
    import time

    pytest.importorskip("re2")
    started = time.monotonic()
    text = og.constant(np.array(["a" * 40 + "!"], object))
    got = og.Session().run(og.regex_replace(text, "(a+)+$", "x"))
    assert got.tolist() == ["a" * 40 + "!"] and time.monotonic() - started < 5
    with pytest.raises((ValueError, OpAttributeError), match="must be at most 65536"):
        og.Session().run(og.as_string(og.constant(np.array([1.0], np.float32)),
                                      width=10 ** 9))


# ------------------------------------------------------------ fuzz findings (edge inputs)

def _const_run(fn):
    with og.Graph().as_default():
        return og.Session().run(fn())


@pytest.mark.parametrize("pos, length, unit, pattern", [
    (2 ** 40, 1, "BYTE", r"pos 1099511627776 out of range for string 'hello' at index 0"),
    (-2 ** 40, 1, "UTF8_CHAR", r"pos -1099511627776 out of range for string 'hello'"),
    ([1, 2 ** 40], [1, 1], "BYTE", r"pos 1099511627776 out of range for string 'abc' at "
                                   r"index 1"),
    ("int64 tensor", 1, "BYTE", r"pos 1099511627776 out of range"),
])
def test_substr_pos_beyond_int32_is_tf_out_of_range_error(pos, length, unit, pattern):
    # the Python int went through np.asarray(..., int32): a raw OverflowError
    with og.Graph().as_default():
        strings = og.constant(np.array(["hello", "abc"] if isinstance(pos, list) else
                                       ["hello"], object))
        if pos == "int64 tensor":
            pos = og.constant(np.int64(2 ** 40))
        y = S.substr(strings, pos, length, unit=unit)
        with pytest.raises(ExecutionError, match=pattern):
            og.Session().run(y)


def test_substr_len_beyond_int32_stops_at_the_end():
    got = _const_run(lambda: S.substr(og.constant(np.array(["hello"], object)), 1, 2 ** 40))
    assert got.tolist() == ["ello"]
    # an int32 pos tensor with an int64 len: both widened, nothing wraps around
    got = _const_run(lambda: S.substr(og.constant(np.array(["hello"], object)),
                                      og.constant(np.int32(2)), 2 ** 40))
    assert got.tolist() == ["llo"]


@pytest.mark.parametrize("pos, error, pattern", [
    (2 ** 70, ValueError, r"substr: pos value 1180591620717411303424 does not fit int64"),
    (np.uint64(2 ** 63), ValueError, "does not fit int64"),
    (1.5, TypeError, "pos must be int32 or int64"),      # was silently truncated to 1
    (None, TypeError, "pos must be int32 or int64"),
    ("1", TypeError, "pos must be int32 or int64"),
    (True, TypeError, "pos must be int32 or int64"),
    ([[1], [1, 2]], TypeError, "pos must be"),
])
def test_substr_refuses_positions_that_are_no_ints_while_building(pos, error, pattern):
    with og.Graph().as_default():
        with pytest.raises(error, match=pattern):
            S.substr(og.constant(np.array(["hello"], object)), pos, 1)


@pytest.mark.parametrize("engine", ["re2", "python"])
def test_regexes_take_strings_with_lone_surrogates(engine, monkeypatch):
    # google-re2 encodes a str strictly: a UnicodeEncodeError from inside the kernel.
    # A str stands for its bytes (stray bytes as surrogate escapes): RE2 gets those,
    # as TF's RE2 gets TF's bytes
    from onegraph.ops import strings as ops_strings
    from onegraph.ops import strings_tf
    from onegraph.ops.regex_re2 import PatternError, compile_re2

    if engine == "re2":
        pytest.importorskip("re2")
    else:
        python_re = lambda: (compile_re2, (PatternError,))   # noqa: E731
        monkeypatch.setattr(ops_strings, "_regex_engine", python_re)
        monkeypatch.setattr(strings_tf, "_regex_engine", python_re)
        monkeypatch.setattr(strings_tf, "_REPLACERS", {})
        monkeypatch.setattr(ops_strings, "_PATTERNS", {})
    values = np.array(["\ud800", "a\udc80b", "x\ud800y\udc80"], object)
    full = _const_run(lambda: S.regex_full_match(og.constant(values), ".*"))
    # RE2 (TF's engine) reads a surrogate's three bytes as one character but a stray
    # byte as none, so "." does not match it; Python's re sees one character each
    assert full.tolist() == ([True, False, False] if engine == "re2" else [True] * 3)
    got = _const_run(lambda: S.regex_replace(og.constant(values), "[xb]", "-"))
    assert [strings_tf._utf8(s) for s in got] == [b"\xed\xa0\x80", b"a\x80-",
                                                   b"-\xed\xa0\x80y\x80"]
    assert got[0] == "\ud800"                     # unchanged: the str as given


def test_regex_full_match_of_bytes_that_are_not_utf8():
    # ops/strings.py decoded bytes strictly: a UnicodeDecodeError inside the kernel
    got = _const_run(lambda: S.regex_full_match(
        og.constant(np.array([b"\xff\xfe", b"abc"], object), dtype=og.string), "[a-c]*"))
    assert got.tolist() == [False, True]


def test_regex_replace_steps_over_whole_characters_after_an_empty_match():
    # RE2::GlobalReplace skips one UTF-8 character, not one byte, past an empty match
    got = _const_run(lambda: S.regex_replace(og.constant(np.array(["aé😀", "x\udc80"],
                                                                   object)), "", "-"))
    assert got.tolist() == ["-a-é-😀-", "-x-\udc80-"]


def test_many_group_patterns_do_not_hang():
    # google-re2's binding tracks every group on every match: 2000 nested groups took
    # 0.05 s per search, minutes for a global replace over 10 000 characters. Only the
    # groups the rewrite uses are kept now (none for a full match).
    import time

    pytest.importorskip("re2")
    started = time.monotonic()
    nested = "(" * 2000 + ")" * 2000
    with og.Graph().as_default():
        text = og.constant(np.array(["x" * 10000], object))
        replaced, kept, matched = og.Session().run([
            S.regex_replace(text, nested, "-"),
            S.regex_replace(text, "(" * 200 + "x" + ")" * 200, "<\\1>", replace_global=False),
            S.regex_full_match(text, "(" * 2000 + "x*" + ")" * 2000)])
    assert len(replaced[0]) == 20001 and kept[0] == "<x>" + "x" * 9999
    assert matched.tolist() == [True]
    assert time.monotonic() - started < 10


def test_patterns_too_deep_for_pythons_re_are_named(monkeypatch):
    from onegraph.ops import strings as ops_strings
    from onegraph.ops.regex_re2 import PatternError, compile_re2

    monkeypatch.setattr(ops_strings, "_regex_engine", lambda: (compile_re2, (PatternError,)))
    with og.Graph().as_default():
        with pytest.raises(OpAttributeError, match="too deeply nested"):
            S.regex_full_match(og.constant(np.array(["a"], object)),
                               "(" * 5000 + ")" * 5000)


def test_pythons_translation_of_escapes_in_and_out_of_classes_matches_re2():
    # \x{H..}, octal, \-style literals and \d take the same meaning inside a character
    # class as outside; google-re2 itself is the oracle for what matches
    re2 = pytest.importorskip("re2")
    from onegraph.ops.regex_re2 import PatternError, compile_re2

    patterns = [r"\x{41}\101[\x{42}\102]\0", r"[\x{61}-\x{63}]+\.", r"a\-b[\-\]]",
                r"[\d\x{5f}]\w\x{1F600}[\x{1F600}]", r"[\012\x{20}]\040"]
    texts = ["AAB\0", "AAA\0", "ABB\0", "abc.", "abd.", "a-b-", "a-b]", "a-bb", "1_😀😀",
             "__😀😀", "_x😀😀", "\n ", "  ", "x "]
    for pattern in patterns:
        ours, theirs = compile_re2(pattern), re2.compile(pattern)
        for text in texts:
            assert bool(ours.fullmatch(text)) == bool(theirs.fullmatch(text)), (pattern, text)
    # what RE2 refuses (backreferences, a bad \x{) or the translation cannot express
    # (Unicode classes), refused alike in and out of a class
    for pattern, message in [(r"\1", r"invalid escape sequence: \\1"),
                             (r"[\1]", r"invalid escape sequence: \\1"),
                             (r"\x{zz}", r"invalid escape sequence: \\x\{"),
                             (r"[\x{zz}]", r"invalid escape sequence: \\x\{"),
                             (r"\pL", r"Unicode classes \\p are not supported"),
                             (r"[\PL]", r"Unicode classes \\P are not supported")]:
        with pytest.raises(PatternError, match=message):
            compile_re2(pattern)

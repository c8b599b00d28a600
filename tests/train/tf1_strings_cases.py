"""The onegraph.train.api_strings cases checked against TensorFlow's tf.compat.v1: shared
by tests/train/test_api_strings.py and tools/record_tf1_reference.py (which needs
tensorflow; the test does not).

A case is (name, function path under tf.compat.v1, positional arguments, keyword
arguments, inputs to differentiate: none, strings have no gradients). An argument
"@key" stands for the input array `key` of `make_inputs()`. String arrays are numpy's
fixed-width unicode (np.savez stores them without pickle); as that drops trailing
NULs, no string here ends with one. TF's string outputs are stored the same way,
their bytes decoded as UTF-8 with surrogate escapes (onegraph's spelling of bytes
that are not UTF-8, see ops/strings_tf.py).
"""

import numpy as np

_ALPHABET = list("abcdefghijklmnopqrstuvwxyz0123456789 -_") + ["é", "ß", "日", "本", "😀",
                                                               "Ω"]


def _hash_strings(rng) -> np.ndarray:
    """Two strings of each length 0..300: random characters (UTF-8 up to 4 bytes each,
    so up to ~1200 bytes) and printable ASCII (exactly n bytes), plus NULs inside."""
    out = []
    for n in range(301):
        out.append("".join(rng.choice(_ALPHABET, n)))
        out.append("".join(chr(c) for c in rng.randint(32, 127, size=n)))
    out += ["a\x00b", "\x00x", "\x00" * 20 + "z", "é\x00" * 40 + "!"]
    return np.array(out, dtype=str)


def make_inputs() -> dict:
    """The named input arrays (fixed seed)."""
    rng = np.random.RandomState(20260701)
    return {
        "words": np.array([["a", "bb", "ccc"], ["dé", "", "f f"]]),
        "cube": np.array([str(i) for i in range(8)]).reshape(2, 2, 2),
        "empty_rows": np.zeros((2, 0), dtype="<U1"),
        "mixed": np.array(["hello", "héllo wörld", "", "日本語テキスト",
                           " pad\t\n\v\f\r", "ÀÉ àé", "ΣΑΣ ΟΔΟΣ", "İß", "ǅŉﬁ",
                           "\u00a0nbsp\u3000", "Tab\tEnd"]),
        "subin": np.array(["hello", "abcdef", "héllo", "日本語テキスト"]),
        "pos": np.array([0, 2, -4, 3], np.int32),
        "lens": np.array([2, 10, 3, -1], np.int32),
        "pos_col": np.array([[0], [1]], np.int32),
        "len_col": np.array([[2], [3]], np.int32),
        "floats": np.array([3.14159, -2.5, 0.0, 1e10, 1e-5, np.inf, -np.inf, np.nan, -0.0,
                            123.456], np.float32),
        "doubles": np.array([np.pi, -1e-300, 1e300, 0.1, -7.0, np.nan]),
        "halfs": np.array([1.5, -0.1, 65504.0], np.float16),
        "ints32": np.array([0, 7, -42, 123456, -2147483648], np.int32),
        "ints64": np.array([0, -1, 2 ** 62, -2 ** 63], np.int64),
        "uint8s": np.array([0, 200, 255], np.uint8),
        "bools": np.array([[True, False]]),
        "float_text": np.array(["1", "-1", "+1", " 12 ", "\t12\n", "1.5", ".5", "5.", "1e5",
                                "1E-5", "0x1A", "-0x10", "0x1p3", "inf", "-INF", "Infinity",
                                "nan", "1e40", "1e400", "-1e400", "1e-50", "01",
                                "3.4028236e38", "0.1234567890123456789012345678901",
                                "\v7\f"]),
        "int_text": np.array(["1", "-1", "+1", " 12 ", "\t12\n", "007", "2147483647",
                              "-2147483648"]),
        "int64_text": np.array(["9223372036854775807", "-9223372036854775808", "0"]),
        "b64_text": np.array(["", "YQ", "YQ==", "YWI", "YWI=", "YWJj", "Pz8-Pg", "Pz8-Pg==",
                              "YWJ=", "YR==", "_w", "_-8", "aMOpbGxv"]),
        "b64_plain": np.array(["", "a", "ab", "abc", "abcd", "héllo", "??>>", "日本"]),
        "regex_in": np.array(["abxd", "hello world", "a1b22c333", "x\n", "١٢٣ 12", "ÀÉ àé",
                              "aaa", "", "tab\there", "a.b", "x{,2}"]),
        "hs": _hash_strings(rng),
        "grid": np.arange(56, dtype=np.int32).reshape(8, 7),
        "fmt_floats": np.array([0.1, 1 / 3, 2.0, -0.0, np.nan, np.inf, 1e20, 1e-7],
                               np.float32),
        "fmt_doubles": np.array([0.1, 1 / 3, 2.0, 1e20, 123456789.0]),
        "quoted": np.array(['a"b', "é", "back\\slash", "new\nline"]),
    }


_BIG = 2 ** 63 - 1
_KEY = [123456789, -987654321]

CASES = [
    # as_string
    ("as_string_f32", "as_string", ["@floats"], {}, []),
    ("as_string_f64", "as_string", ["@doubles"], {}, []),
    ("as_string_precision", "as_string", ["@floats"], {"precision": 2}, []),
    ("as_string_scientific", "as_string", ["@floats"], {"scientific": True}, []),
    ("as_string_sci_precision", "as_string", ["@doubles"], {"scientific": True,
                                                            "precision": 3}, []),
    ("as_string_shortest", "as_string", ["@floats"], {"shortest": True}, []),
    ("as_string_shortest_p3", "as_string", ["@doubles"], {"shortest": True, "precision": 3}, []),
    ("as_string_width", "as_string", ["@floats"], {"width": 12}, []),
    ("as_string_zero_fill", "as_string", ["@floats"], {"width": 12, "fill": "0"}, []),
    ("as_string_left", "as_string", ["@floats"], {"width": 12, "fill": "-"}, []),
    ("as_string_plus", "as_string", ["@floats"], {"fill": "+"}, []),
    ("as_string_space", "as_string", ["@doubles"], {"fill": " ", "precision": 1}, []),
    ("as_string_alt", "as_string", ["@floats"], {"fill": "#", "shortest": True}, []),
    ("as_string_f16", "as_string", ["@halfs"], {}, []),
    ("as_string_i32", "as_string", ["@ints32"], {}, []),
    ("as_string_i32_zero", "as_string", ["@ints32"], {"width": 6, "fill": "0"}, []),
    ("as_string_i32_space", "as_string", ["@ints32"], {"width": 8, "fill": " "}, []),
    ("as_string_i64", "as_string", ["@ints64"], {"width": 3}, []),
    ("as_string_u8", "as_string", ["@uint8s"], {"fill": "-", "width": 4}, []),
    ("as_string_bool", "as_string", ["@bools"], {"width": 7}, []),
    ("as_string_str", "as_string", ["@words"], {"width": 4}, []),
    ("as_string_str_left", "as_string", ["@words"], {"width": 4, "fill": "-"}, []),
    # joins
    ("string_join_scalar", "string_join", [["@words", "z"]], {"separator": "|"}, []),
    ("string_join_three", "string_join", [["@words", "@words", "!"]], {"separator": ", "}, []),
    ("string_join_one", "string_join", [["@words"]], {}, []),
    ("strings_join", "strings.join", [["x", "@words"]], {}, []),
    ("reduce_join_all", "reduce_join", ["@words"], {}, []),
    ("reduce_join_0", "reduce_join", ["@words", 0], {"separator": "+"}, []),
    ("reduce_join_01", "reduce_join", ["@words", [0, 1]], {}, []),
    ("reduce_join_10", "reduce_join", ["@words", [1, 0]], {}, []),
    ("reduce_join_none_listed", "reduce_join", ["@words", []], {}, []),
    ("reduce_join_keep", "reduce_join", ["@words", -1], {"keep_dims": True,
                                                         "separator": "-"}, []),
    ("reduce_join_cube_20", "reduce_join", ["@cube", [2, 0]], {}, []),
    ("reduce_join_cube_02", "reduce_join", ["@cube", [0, 2]], {}, []),
    ("reduce_join_cube_keep", "reduce_join", ["@cube"], {"keep_dims": True}, []),
    ("reduce_join_empty_axis", "reduce_join", ["@empty_rows", 1], {}, []),
    ("strings_reduce_join", "strings.reduce_join", ["@cube", -2], {"separator": "/"}, []),
    # per-string maps
    ("string_strip", "string_strip", ["@mixed"], {}, []),
    ("strings_strip", "strings.strip", ["@words"], {}, []),
    ("length_bytes", "strings.length", ["@mixed"], {}, []),
    ("length_chars", "strings.length", ["@mixed"], {"unit": "UTF8_CHAR"}, []),
    ("lower_ascii", "strings.lower", ["@mixed"], {}, []),
    ("lower_utf8", "strings.lower", ["@mixed"], {"encoding": "utf-8"}, []),
    ("upper_ascii", "strings.upper", ["@mixed"], {}, []),
    ("upper_utf8", "strings.upper", ["@mixed"], {"encoding": "utf-8"}, []),
    # substr
    ("substr_bytes", "substr", ["@subin", 1, 3], {}, []),
    ("substr_negative_pos", "substr", ["@subin", -3, 2], {}, []),
    ("substr_to_end", "substr", ["@subin", 2, -1], {}, []),
    ("substr_at_end", "substr", ["@subin", 5, 4], {}, []),
    ("substr_first_of_5", "substr", ["@subin", -5, 1], {}, []),
    ("substr_chars", "substr", ["@subin", 1, 3], {"unit": "UTF8_CHAR"}, []),
    ("substr_chars_negative", "substr", ["@subin", -5, 2], {"unit": "UTF8_CHAR"}, []),
    ("substr_chars_negative_len", "substr", ["@subin", 1, -1], {"unit": "UTF8_CHAR"}, []),
    ("substr_elementwise", "substr", ["@subin", "@pos", "@lens"], {}, []),
    ("substr_elementwise_chars", "strings.substr", ["@subin", "@pos", "@lens"],
     {"unit": "UTF8_CHAR"}, []),
    ("substr_broadcast", "substr", ["@subin", "@pos_col", "@len_col"], {}, []),
    # regexes
    ("regex_star_global", "regex_replace", ["@regex_in", "x*", "-"], {}, []),
    ("regex_star_first", "regex_replace", ["@regex_in", "x*", "-"], {"replace_global": False},
     []),
    ("regex_empty", "regex_replace", ["@regex_in", "", "."], {}, []),
    ("regex_swap", "regex_replace", ["@regex_in", r"(\w+) (\w+)", r"\2 \1"], {}, []),
    ("regex_whole", "regex_replace", ["@regex_in", r"\d+", r"<\0>"], {}, []),
    ("regex_alternation", "regex_replace", ["@regex_in", r"(a)|(b)", r"[\1\2]"], {}, []),
    ("regex_dollar", "regex_replace", ["@regex_in", "$", "END"], {}, []),
    ("regex_caret", "regex_replace", ["@regex_in", "^", "S"], {}, []),
    ("regex_space", "regex_replace", ["@regex_in", r"\s", "_"], {}, []),
    ("regex_word_boundary", "regex_replace", ["@regex_in", r"\b", "|"], {}, []),
    ("regex_not_word", "regex_replace", ["@regex_in", r"\W+", "#"], {}, []),
    ("regex_ignore_case", "regex_replace", ["@regex_in", r"(?i)é|A", "E"], {}, []),
    ("regex_lazy", "regex_replace", ["@regex_in", "a*?", "-"], {}, []),
    ("regex_backslash", "regex_replace", ["@regex_in", "l+", r"\\"], {}, []),
    ("regex_posix", "regex_replace", ["@regex_in", r"[[:digit:][:space:]]", "D"], {}, []),
    ("regex_quoted", "regex_replace", ["@regex_in", r"\Qa.\E", "Q"], {}, []),
    ("regex_brace_literal", "regex_replace", ["@regex_in", "x{,2}", "B"], {}, []),
    ("regex_hex_brace", "regex_replace", ["@regex_in", r"\x{e9}|\x{6f}", "X"], {}, []),
    ("regex_z", "regex_replace", ["@regex_in", r"d\z", "Z"], {}, []),
    ("regex_negated_class", "strings.regex_replace", ["@regex_in", r"[\D]", ""], {}, []),
    ("full_match_digits", "strings.regex_full_match", ["@regex_in", r"[\d\s]+"], {}, []),
    ("full_match_word", "strings.regex_full_match", ["@regex_in", r"\w+"], {}, []),
    ("full_match_dot", "strings.regex_full_match", ["@regex_in", r".*"], {}, []),
    ("full_match_dotall", "strings.regex_full_match", ["@regex_in", r"(?s).+"], {}, []),
    ("full_match_newline", "strings.regex_full_match", ["@regex_in", "x\n$"], {}, []),
    ("full_match_case", "strings.regex_full_match", ["@regex_in", r"(?i)àé.*"], {}, []),
    # numbers
    ("to_number_f32", "string_to_number", ["@float_text"], {}, []),
    ("to_number_f64", "strings.to_number", ["@float_text"], {"out_type": "float64"}, []),
    ("to_number_i32", "string_to_number", ["@int_text"], {"out_type": "int32"}, []),
    ("to_number_i64", "strings.to_number", ["@int64_text"], {"out_type": "int64"}, []),
    # base64
    ("encode_base64", "encode_base64", ["@b64_plain"], {}, []),
    ("encode_base64_pad", "encode_base64", ["@b64_plain"], {"pad": True}, []),
    ("decode_base64", "decode_base64", ["@b64_text"], {}, []),
    # hashing
    ("hash_fast", "string_to_hash_bucket_fast", ["@hs", _BIG], {}, []),
    ("hash_fast_1000", "strings.to_hash_bucket_fast", ["@hs", 1000], {}, []),
    ("hash_strong", "string_to_hash_bucket_strong", ["@hs", _BIG, _KEY], {}, []),
    ("hash_strong_17", "strings.to_hash_bucket_strong", ["@hs", 17, [0, 2 ** 62]], {}, []),
    ("hash_legacy", "string_to_hash_bucket", ["@hs", _BIG], {}, []),
    ("hash_legacy_7", "strings.to_hash_bucket", ["@hs", 7], {}, []),
    ("hash_fast_2d", "string_to_hash_bucket_fast", ["@words", 100], {}, []),
    # format
    ("format_summarized", "strings.format", ["x={} y={}", ["@grid", "@words"]],
     {"summarize": 2}, []),
    ("format_floats", "strings.format", ["{}", "@fmt_floats"], {"summarize": 8}, []),
    ("format_floats_cut", "strings.format", ["{}", "@fmt_floats"], {}, []),
    ("format_doubles", "strings.format", ["[{}]", ["@fmt_doubles"]], {"summarize": -1}, []),
    ("format_cube", "strings.format", ["{}", "@cube"], {"summarize": 1}, []),
    ("format_quoted", "strings.format", ["<>", "@quoted"], {"placeholder": "<>"}, []),
    ("format_bools", "strings.format", ["{}!", "@bools"], {}, []),
    ("format_empty", "strings.format", ["{} {}", ["@empty_rows", "@ints64"]], {}, []),
    ("format_none", "strings.format", ["plain", []], {}, []),
]

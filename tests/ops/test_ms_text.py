"""com.microsoft Tokenizer against onnxruntime: single-node models over its modes
(tokenexp, separators, characters), marks, mincharnum, padding, ranks and empty inputs,
plus a seeded fuzz of random strings and patterns; and the named errors."""

from __future__ import annotations

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

import onegraph  # noqa: E402
from onegraph.convert import from_onnx, to_onnx  # noqa: E402
from onegraph.errors import OpAttributeError, ShapeError, UnsupportedOpError  # noqa: E402
from onegraph.ops import REGISTRY  # noqa: E402


def _model(x_shape=None, **attrs):
    node = helper.make_node("Tokenizer", ["X"], ["Y"], domain="com.microsoft", **attrs)
    graph = helper.make_graph(
        [node], "tokenizer",
        [helper.make_tensor_value_info("X", TensorProto.STRING, x_shape)],
        [helper.make_tensor_value_info("Y", TensorProto.STRING, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid("com.microsoft", 1)])


def _ort(model, x):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return session.run(None, {"X": x})[0]


def _assert_same(x, **attrs):
    x = np.array(x, dtype=object)
    model = _model(**attrs)
    want = _ort(model, x)
    got = onegraph.Session(from_onnx(model)).run("Y", {"X": x})
    assert got.shape == want.shape, (x.tolist(), attrs, got.tolist(), want.tolist())
    assert got.tolist() == want.tolist(), (x.tolist(), attrs)
    return got


BASE = {"mark": 0, "mincharnum": 1, "pad_value": "#"}
TEXTS = ["Hello World", "I love computer science !", "", "  a  b  ", "héllo wörld",
         "x1_y2 z-3", "ab-cd ef-g", "two\nlines"]


@pytest.mark.parametrize("attrs", [
    {"tokenexp": "[a-zA-Z0-9_]+"},                      # what skl2onnx writes
    {"tokenexp": "\\w+"}, {"tokenexp": "[^ ]+"}, {"tokenexp": "^a"}, {"tokenexp": "a*"},
    {"tokenexp": "b*"}, {"tokenexp": "o|"}, {"tokenexp": "$"}, {"tokenexp": "\\bl"},
    {"tokenexp": "."}, {"separators": [""]}, {"tokenexp": ".", "separators": [""]},
    {"separators": [" "]}, {"separators": [" +"]}, {"separators": ["-", " "]},
    {"separators": [" ", "-"]}, {"separators": ["o w", "lo"]}, {"separators": ["^I"]},
    {"separators": [" ", "^w"]}, {"separators": [" "], "tokenexp": "[a-z]"},
])
@pytest.mark.parametrize("mark, mincharnum", [(0, 1), (1, 1), (0, 2), (1, 3)])
def test_modes_match_onnxruntime(attrs, mark, mincharnum, engine):
    if mincharnum > 1 and (attrs.get("tokenexp") == "." or attrs.get("separators") == [""]):
        with pytest.raises(OpAttributeError, match="too big for character tokenization"):
            _kernel(TEXTS, **dict(BASE, mark=mark, mincharnum=mincharnum, **attrs))
        return  # onnxruntime refuses it too ("mincharnum is too big ...")
    _assert_same(TEXTS, **dict(BASE, mark=mark, mincharnum=mincharnum, **attrs))


@pytest.mark.parametrize("x", [[["a b", "c"], ["d", ""]], [["", ""]], ["", ""], [],
                               np.empty((2, 0), object).tolist(), ["only"]])
@pytest.mark.parametrize("mark", [0, 1])
def test_shapes_and_empty_results_match_onnxruntime(x, mark):
    if len(x) and not len(x[0]) and isinstance(x[0], list):
        x = np.empty((2, 0), object)
    _assert_same(x, **dict(BASE, mark=mark, tokenexp="[a-z]"))


@pytest.fixture(params=["re2", "python-re"])
def engine(request, monkeypatch):
    """Both pattern engines: google-re2 when installed, and Python's `re` on the
    translated pattern (what a machine without google-re2 runs)."""
    from onegraph.ops import strings as ops_strings
    from onegraph.ops.regex_re2 import PatternError, compile_re2

    if request.param == "re2":
        pytest.importorskip("re2")
    else:
        monkeypatch.setattr(ops_strings, "_regex_engine",
                            lambda: (compile_re2, (PatternError,)))
    monkeypatch.setattr(ops_strings, "_PATTERNS", {})  # patterns compiled afresh
    return request.param


def test_fuzz_matches_onnxruntime(engine):
    rng = np.random.default_rng(7)
    alphabet = list("ab -_,.xé1") + ["  "]
    patterns = ["[ab]+", "a", "[^ ]+", "\\w+", "b+a?", "x|ab", "[a-z]{2}", "é+", "\\d"]
    separators = [" ", ",", "-", "ab", "x+", "é", "\\.", "b a"]
    for trial in range(120):
        x = ["".join(rng.choice(alphabet, rng.integers(0, 12))) for _ in range(4)]
        attrs = dict(BASE, mark=int(rng.integers(0, 2)), mincharnum=int(rng.integers(1, 4)),
                     pad_value=str(rng.choice(["#", "", "pad"])))
        if trial % 2:
            attrs["tokenexp"] = str(rng.choice(patterns))
        else:
            k = int(rng.integers(1, 4))
            attrs["separators"] = [str(s) for s in rng.choice(separators, k, replace=False)]
        _assert_same(x, **attrs)


def test_skl2onnx_style_pipeline_round_trips():
    """The export writes Tokenizer back as it came; onnxruntime runs it the same."""
    x = np.array(TEXTS, dtype=object)
    model = _model(["C"], **dict(BASE, tokenexp="[a-zA-Z0-9_]+"))
    back = to_onnx(from_onnx(model))
    assert [(n.domain, n.op_type) for n in back.graph.node] == [("com.microsoft",
                                                                "Tokenizer")]
    assert _ort(back, x).tolist() == _ort(model, x).tolist()


def _kernel(x, **attrs):
    d = REGISTRY.get("Tokenizer", "com.microsoft")
    return d.kernel([np.array(x, dtype=object)], d.resolve_attrs(attrs), None)[0]


@pytest.mark.parametrize("x, attrs, error, words", [
    (["a"], dict(BASE), OpAttributeError, "one of separators and tokenexp"),
    (["a"], dict(BASE, tokenexp=""), OpAttributeError, "tokenexp must not be empty"),
    (["a"], dict(BASE, tokenexp="(", ), OpAttributeError, "bad tokenexp '\\('"),
    (["a"], dict(BASE, mincharnum=0, tokenexp="a"), OpAttributeError, "mincharnum"),
    (["a"], dict(BASE, separators=["", " "]), UnsupportedOpError, "empty separator"),
    (["a b"], dict(BASE, separators=["x*"]), UnsupportedOpError, "matched an empty"),
    ([[["a"]]], dict(BASE, tokenexp="a"), ShapeError, "\\[C\\] or \\[N, C\\]"),
])
def test_bad_inputs_raise_named_errors(x, attrs, error, words):
    with pytest.raises(error, match=words):
        _kernel(x, **attrs)

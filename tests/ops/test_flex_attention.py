"""FlexAttention (ai.onnx.preview) beyond the node tests, against ONNX's reference
evaluator: grouped-query heads, both modifier graphs, precisions, bad inputs."""

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from onegraph.convert import from_onnx
from onegraph.errors import OneGraphError, ShapeError
from onegraph.train.session import Session

_CODES = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
          np.float16: TensorProto.FLOAT16}


def _modifier(name, op, const, code):
    """A one-op modifier graph x -> op(x, const) in element type `code`."""
    x = helper.make_tensor_value_info("x", code, None)
    y = helper.make_tensor_value_info("y", code, None)
    c = helper.make_tensor("c", code, [], [const])
    return helper.make_graph([helper.make_node(op, ["x", "c"], ["y"])], name, [x],
                             [y], initializer=[c])


def _model(dtype, qs, ks, vs, **attrs):
    code = _CODES[dtype]
    ins = [helper.make_tensor_value_info(n, code, s) for n, s in
           (("Q", qs), ("K", ks), ("V", vs))]
    out = helper.make_tensor_value_info("Y", code, None)
    node = helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"],
                            domain="ai.onnx.preview", **attrs)
    graph = helper.make_graph([node], "flex", ins, [out])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25),
                                                   helper.make_opsetid("ai.onnx.preview", 1)])


def _run_both(model, feeds):
    ours = Session(from_onnx(model)).run(["Y"], feeds)[0]
    ref = ReferenceEvaluator(model).run(None, feeds)[0]
    return ours, ref


@pytest.mark.parametrize("hq, hkv", [(4, 4), (6, 2), (3, 1)])
@pytest.mark.parametrize("mods", ["none", "score", "prob", "both"])
def test_matches_reference(hq, hkv, mods):
    rng = np.random.default_rng(hq * 10 + hkv)
    qs, ks, vs = (2, hq, 5, 8), (2, hkv, 7, 8), (2, hkv, 7, 3)
    attrs = {"scale": 0.3}
    if mods in ("score", "both"):
        attrs["score_mod"] = _modifier("score", "Mul", 0.5, TensorProto.FLOAT)
    if mods in ("prob", "both"):
        attrs["prob_mod"] = _modifier("prob", "Pow", 2.0, TensorProto.FLOAT)
    feeds = {n: rng.standard_normal(s).astype(np.float32)
             for n, s in (("Q", qs), ("K", ks), ("V", vs))}
    ours, ref = _run_both(_model(np.float32, qs, ks, vs, **attrs), feeds)
    assert ours.shape == (2, hq, 5, 3) and ours.dtype == np.float32
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype, precision", [(np.float16, None), (np.float16, 1),
                                              (np.float64, None), (np.float32, 11)])
def test_precisions(dtype, precision):
    rng = np.random.default_rng(3)
    shape = (1, 2, 4, 6)
    feeds = {n: rng.standard_normal(shape).astype(dtype) for n in "QKV"}
    attrs = {} if precision is None else {"softmax_precision": precision}
    ours, ref = _run_both(_model(dtype, shape, shape, shape, **attrs), feeds)
    assert ours.dtype == dtype
    tol = 2e-3 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(ours.astype(np.float64), ref.astype(np.float64), rtol=tol,
                               atol=tol)


def test_fully_masked_row_gives_zeros():
    """A score_mod writing -inf everywhere leaves zeros, not NaN (like Attention)."""
    shape = (1, 1, 2, 4)
    mask = _modifier("mask", "Add", -np.inf, TensorProto.FLOAT)
    model = _model(np.float32, shape, shape, shape, score_mod=mask)
    feeds = {n: np.ones(shape, np.float32) for n in "QKV"}
    y = Session(from_onnx(model)).run(["Y"], feeds)[0]
    np.testing.assert_array_equal(y, np.zeros(shape, np.float32))


@pytest.mark.parametrize("qs, ks, vs, match", [
    ((1, 2, 3), (1, 2, 3, 4), (1, 2, 3, 4), r"Q must have rank 4"),
    ((1, 3, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4), r"multiple of kv_num_heads"),
    ((1, 2, 3, 4), (1, 2, 3, 5), (1, 2, 3, 4), r"head size 4 != K head size 5"),
    ((1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 6, 4), r"share heads and sequence length"),
    ((2, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4), r"batch sizes differ"),
])
def test_bad_shapes(qs, ks, vs, match):
    model = _model(np.float32, None, None, None)
    feeds = {"Q": np.zeros(qs, np.float32), "K": np.zeros(ks, np.float32),
             "V": np.zeros(vs, np.float32)}
    with pytest.raises(ShapeError, match=match):
        Session(from_onnx(model)).run(["Y"], feeds)


def test_bad_precision_named():
    shape = (1, 1, 2, 2)
    model = _model(np.float32, shape, shape, shape, softmax_precision=7)
    with pytest.raises(OneGraphError, match=r"FlexAttention.*softmax_precision 7"):
        Session(from_onnx(model)).run(["Y"], {n: np.zeros(shape, np.float32) for n in "QKV"})

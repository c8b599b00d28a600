"""TopK with k much smaller than the axis takes a selection path (argpartition, then a
sort of k elements): against onnxruntime on inputs full of ties, where ONNX orders
equal values by index."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import onegraph as og
from onegraph.convert import from_onnx
from onegraph.ops.reduction import _top_k

_ELEM = {np.dtype(np.int32): TensorProto.INT32, np.dtype(np.uint8): TensorProto.UINT8,
         np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE}


def _model(x, axis, largest):
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=axis, largest=largest)
    graph = helper.make_graph(
        [node], "topk",
        [helper.make_tensor_value_info("x", _ELEM[x.dtype], x.shape),
         helper.make_tensor_value_info("k", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("v", _ELEM[x.dtype], None),
         helper.make_tensor_value_info("i", TensorProto.INT64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    return model


def _inputs(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 4))
    shape = tuple(int(d) for d in rng.integers(8, 60, rank))
    axis = int(rng.integers(-rank, rank))
    k = int(rng.integers(1, shape[axis] // 8 + 1))
    kind = seed % 4
    if kind == 0:
        x = rng.integers(-3, 4, shape).astype(np.int32)      # many ties
    elif kind == 1:
        x = rng.integers(0, 3, shape).astype(np.uint8)       # ties, no negation possible
    elif kind == 2:
        x = rng.standard_normal(shape).astype(np.float32)
    else:
        x = np.round(rng.standard_normal(shape), 1)          # float64 with ties
    return x, axis, k


@pytest.mark.parametrize("largest", [1, 0])
@pytest.mark.parametrize("seed", range(24))
def test_small_k_matches_onnxruntime_with_ties(seed, largest):
    import onnxruntime as ort

    x, axis, k = _inputs(seed)
    assert 8 * k <= x.shape[axis]  # the selection path
    model = _model(x, axis, largest)
    feeds = {"x": x, "k": np.array([k], np.int64)}
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    got = og.Session(from_onnx(model)).run(["v", "i"], feeds)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_selection_and_full_sort_agree_with_nan_rows():
    # rows holding NaN go through the full sort (NaN ranks as the largest value)
    x = np.random.default_rng(3).standard_normal((4, 64))
    x[1, 7] = np.nan
    attrs = {"axis": 1, "largest": 1, "sorted": 1}
    values, indices = _top_k([x, np.array([4])], attrs, None)
    assert np.isnan(values[1, 0]) and indices[1, 0] == 7
    np.testing.assert_array_equal(indices[0], np.argsort(-x[0], kind="stable")[:4])

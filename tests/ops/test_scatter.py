"""The deprecated Scatter (opsets 9-10) against independent oracles.

Scatter is ScatterElements without `reduction`. The importer upgrades opset < 13 models
with ONNX's version converter, which rewrites Scatter to ScatterElements, so models are
checked both ways: the Scatter kernel itself, and an opset-10 model through `from_onnx`
and the Session. Oracles: numpy's put_along_axis, the reference evaluator on the
equivalent ScatterElements node, and onnxruntime's own Scatter.
"""

import numpy as np
import pytest

from onegraph.errors import ShapeError
from onegraph.ops import KernelContext, TensorInfo, get_op

onnx = pytest.importorskip("onnx")

from onnx import helper  # noqa: E402


def _model(op_type, inputs, axis, opset):
    names = ["data", "indices", "updates"]
    node = helper.make_node(op_type, names, ["y"], axis=axis)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(nm, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
         for nm, a in zip(names, inputs)],
        [helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(inputs[0].dtype),
                                       None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model, dict(zip(names, inputs))


def _kernel(inputs, axis):
    op = get_op("Scatter")
    return op.kernel(list(inputs), op.resolve_attrs({"axis": axis}), KernelContext())[0]


def _session(inputs, axis):
    from onegraph import Session
    from onegraph.convert import from_onnx

    model, feeds = _model("Scatter", inputs, axis, opset=10)
    return Session(from_onnx(model)).run(["y"], feeds)[0]


def _put_along_axis(inputs, axis):
    data, idx, upd = inputs
    axis %= data.ndim
    out = data.copy()
    # put_along_axis wants indices as large as data off the axis: use the corner block
    block = out[tuple(slice(None) if a == axis else slice(0, n)
                      for a, n in enumerate(idx.shape))]
    np.put_along_axis(block, np.where(idx < 0, idx + data.shape[axis], idx), upd, axis)
    return out


def _reference(inputs, axis):
    from onnx.reference import ReferenceEvaluator

    model, feeds = _model("ScatterElements", inputs, axis, opset=11)
    return ReferenceEvaluator(model).run(None, feeds)[0]


def _case(rng, shape, axis, idx_shape, dtype=np.float32, negative=False):
    """Random data and updates; indices distinct along the axis (duplicates are
    unspecified without a reduction)."""
    data = (rng.standard_normal(shape) * 10).astype(dtype)
    n = shape[axis]
    # a random permutation per line along the axis, cut to idx_shape[axis] entries
    perm = np.argsort(rng.random(tuple(idx_shape[:axis]) + (n,) + tuple(idx_shape[axis + 1:])),
                      axis=axis)
    idx = np.take(perm, np.arange(idx_shape[axis]), axis=axis).astype(np.int64)
    if negative:
        idx = np.where(rng.random(idx.shape) < 0.5, idx - n, idx)
    upd = (rng.standard_normal(idx_shape) * 10).astype(dtype)
    return [data, idx, upd]


CASES = [
    ("1d", (7,), 0, (4,)),
    ("2d axis0", (5, 4), 0, (3, 4)),
    ("2d axis1", (3, 6), 1, (2, 3)),
    ("3d axis -1", (2, 3, 5), -1, (2, 2, 4)),
    ("3d axis 1 partial", (4, 5, 3), 1, (3, 5, 2)),
    ("full", (3, 3), 1, (3, 3)),
]


@pytest.mark.parametrize("negative", [False, True])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_scatter_vs_oracles(case, negative):
    _, shape, axis, idx_shape = case
    rng = np.random.default_rng(len(shape) * 10 + len(idx_shape) + negative)
    inputs = _case(rng, shape, axis % len(shape), idx_shape, negative=negative)
    want = _put_along_axis(inputs, axis)
    np.testing.assert_array_equal(_reference(inputs, axis), want)
    np.testing.assert_array_equal(_kernel(inputs, axis), want)
    np.testing.assert_array_equal(_session(inputs, axis), want)


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.bool_])
def test_scatter_dtypes(dtype):
    inputs = _case(np.random.default_rng(1), (4, 3), 0, (2, 3), dtype=dtype)
    got = _kernel(inputs, 0)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, _put_along_axis(inputs, 0))


def test_scatter_vs_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    inputs = _case(np.random.default_rng(2), (3, 5), 1, (3, 2), negative=True)
    model, feeds = _model("Scatter", inputs, 1, opset=10)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(_kernel(inputs, 1), sess.run(None, feeds)[0])


def test_scatter_empty_indices_copy_data():
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    idx = np.zeros((0, 3), np.int64)
    upd = np.zeros((0, 3), np.float32)
    got = _kernel([data, idx, upd], 0)
    np.testing.assert_array_equal(got, data)
    assert got is not data


def test_scatter_infer_and_default_axis():
    op = get_op("Scatter")
    attrs = op.resolve_attrs({})
    assert attrs["axis"] == 0
    info = op.infer(attrs, [TensorInfo(np.dtype(np.float32), (4, 3)),
                            TensorInfo(np.dtype(np.int64), (2, 3)),
                            TensorInfo(np.dtype(np.float32), (2, 3))])[0]
    assert info.shape == (4, 3) and info.dtype == np.float32


def test_importer_upgrades_scatter_to_scatter_elements():
    from onegraph.convert import from_onnx

    inputs = _case(np.random.default_rng(3), (3, 4), 1, (3, 2))
    model, _ = _model("Scatter", inputs, 1, opset=9)
    ops = [n.op_type for n in from_onnx(model).graph.nodes]
    assert ops == ["ScatterElements"]


BAD = [
    ("index too big", [np.zeros((2, 3)), np.array([[0, 3, 1]]), np.ones((1, 3))], 1,
     "out of range"),
    ("index too small", [np.zeros((2, 3)), np.array([[-3], [0]]), np.ones((2, 1))], 0,
     "out of range"),
    ("updates shape", [np.zeros((2, 3)), np.array([[0, 1]]), np.ones((1, 3))], 1,
     "updates"),
    ("indices rank", [np.zeros((2, 3)), np.array([0, 1]), np.ones(2)], 1, "rank"),
    ("indices too wide", [np.zeros((2, 3)), np.zeros((3, 1), np.int64), np.ones((3, 1))], 1,
     "within data"),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_scatter_bad_inputs_raise(case):
    _, inputs, axis, words = case
    with pytest.raises(ShapeError, match=f"Scatter: .*{words}"):
        _kernel(inputs, axis)

"""TF's sparse tensor ops (ops/sparse.py) and their gradients (ops/sparse_grad.py) against
TensorFlow's recorded outputs, refusals and gradients.

tests/ops/data/tf_sparse_ops_reference.npz is written by tools/record_tf_sparse_ops.py
(TF 2.21, graph mode, raw ops): per case the op, its attrs, inputs, then TF's outputs or
its refusal message, and for differentiable cases tf.gradients of one output (with
recorded grad_ys) w.r.t. the values / dense inputs.
"""

import json
import os

import numpy as np
import pytest

import onegraph as og
from onegraph.errors import ExecutionError
from onegraph.ops import KernelContext, get_op

DATA = os.path.join(os.path.dirname(__file__), "data", "tf_sparse_ops_reference.npz")
REF = dict(np.load(DATA, allow_pickle=False))
CASES = [str(c) for c in REF["cases"]]


def _registered(case):
    from onegraph.ops import REGISTRY

    return REGISTRY.has(str(REF[f"{case}/op"]), "onegraph")


def _inputs(case):
    n = sum(1 for k in REF if k.startswith(f"{case}/in"))
    return [REF[f"{case}/in{i}"] for i in range(n)]


def _attrs(case):
    # TF's bools as og's int attributes
    return {k: int(v) for k, v in json.loads(str(REF[f"{case}/attrs"])).items()}


def _run(case, inputs=None):
    op = get_op(str(REF[f"{case}/op"]), "onegraph")
    inputs = _inputs(case) if inputs is None else inputs
    return op.kernel(inputs, op.resolve_attrs(_attrs(case)), KernelContext())


OK = [c for c in CASES if f"{c}/out0" in REF and _registered(c)]
FAILING = [c for c in CASES if f"{c}/error" in REF and _registered(c)]
GRAD = [c for c in CASES if f"{c}/gy" in REF and _registered(c)]


def _close(got, want, what):
    got = np.asarray(got)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != TF's {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != TF's {want.shape}"
    if want.dtype.kind == "f":
        tol = 1e-5 if want.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def test_every_case_is_checked():
    # the recorded ops this module implements: each has passing or failing cases
    assert len(OK) >= 60 and len(FAILING) >= 15 and len(GRAD) >= 15


@pytest.mark.parametrize("case", OK)
def test_kernel_matches_tf(case):
    outs = _run(case)
    n = sum(1 for k in REF if k.startswith(f"{case}/out"))
    assert len(outs) == n
    for i, got in enumerate(outs):
        _close(got, REF[f"{case}/out{i}"], f"{case} output {i}")


@pytest.mark.parametrize("case", FAILING)
def test_kernel_refuses_as_tf(case):
    with pytest.raises(ExecutionError) as e:
        _run(case)
    assert str(e.value) == str(REF[f"{case}/error"])


def _graph_gradients(case):
    """og.gradients of the recorded output w.r.t. every input TF differentiated."""
    inputs, attrs = _inputs(case), _attrs(case)
    op_type, gout = str(REF[f"{case}/op"]), int(REF[f"{case}/gout"])
    wrt = sorted(int(k.split("/grad")[1]) for k in REF if k.startswith(f"{case}/grad"))
    g = og.Graph()
    with g.as_default():
        ts = [og.constant(x) for x in inputs]
        outs = g.op(op_type, ts, attrs, domain="onegraph")
        outs = outs if isinstance(outs, list) else [outs]
        grads = og.gradients(outs[gout], [ts[i] for i in wrt], grad_ys=REF[f"{case}/gy"])
    return wrt, og.Session(g).run(grads)


@pytest.mark.parametrize("case", GRAD)
def test_gradient_matches_tf(case):
    wrt, got = _graph_gradients(case)
    assert wrt, "TF recorded no gradient"
    for i, gv in zip(wrt, got):
        _close(gv, REF[f"{case}/grad{i}"], f"{case} d/d input {i}")


def _numeric(case, k):
    """Central differences of sum(gy * output[gout]) w.r.t. float input k."""
    inputs, gout, gy = _inputs(case), int(REF[f"{case}/gout"]), REF[f"{case}/gy"]
    x = inputs[k].astype(np.float64)
    out = np.zeros_like(x)
    eps = 1e-6
    for j in range(x.size):  # a test-side loop over a few elements
        for sign in (1, -1):
            y = x.copy()
            y.reshape(-1)[j] += sign * eps
            args = list(inputs)
            args[k] = y
            out.reshape(-1)[j] += sign * np.sum(gy * _run(case, args)[gout]) / (2 * eps)
    return out


@pytest.mark.parametrize("case", ["mm_00", "mm_11", "add_f64", "sda_dup", "reorder_2d",
                                  "red_sum_0_2_keep", "fill_rows", "softmax_2d",
                                  "cw_mul_full", "cw_div_bcast_col"])
def test_gradient_matches_central_differences(case):
    if not _registered(case):
        pytest.skip("op not implemented")
    wrt, got = _graph_gradients(case)
    for i, gv in zip(wrt, got):
        np.testing.assert_allclose(gv, _numeric(case, i), rtol=1e-6, atol=1e-7)


def test_sparse_to_dense_unvalidated_repeat_keeps_the_last():
    op = get_op("SparseToDense", "onegraph")
    (out,) = op.kernel([np.array([[0], [0]]), np.array([3]), np.array([1.0, 2.0]),
                        np.float64(0)], op.resolve_attrs({"validate_indices": 0}), None)
    np.testing.assert_array_equal(out, [2.0, 0.0, 0.0])


@pytest.mark.parametrize("op_type, inputs, message", [
    ("SparseToDense", [np.zeros((1, 1, 1), np.int64), np.array([2]), np.float32(1),
                       np.float32(0)], "scalar, vector, or matrix"),
    ("SparseToDense", [np.array([[0]]), np.array([2, 2]), np.float32(1), np.float32(0)],
     "incorrect number of elements"),
    ("SparseToDense", [np.array([[0.5]]), np.array([2]), np.float32(1), np.float32(0)],
     "integer tensor"),
    ("SparseTensorDenseMatMul", [np.zeros((1, 2), np.int64), np.ones(2), np.array([2, 2]),
                                 np.ones((2, 2))], "does not match number of entries"),
    ("SparseTensorDenseMatMul", [np.zeros((1, 2), np.int64), np.ones(1), np.array([2, 2]),
                                 np.ones(2)], "is not a matrix"),
    ("SparseAdd", [np.zeros((1, 2), np.int64), np.ones(1), np.array([2, 2]),
                   np.zeros((1, 2), np.int64), np.ones(1), np.array([2, 2]), np.ones(2)],
     "should be a scalar"),
    ("SparseReshape", [np.zeros((1, 2), np.int64), np.array([2, 2]), np.array([-3, 2])],
     "must be non-negative"),
    ("SparseTensorDenseAdd", [np.array([[0, 5]]), np.ones(1), np.array([2, 2]),
                              np.ones((2, 2))], "out of bounds"),
])
def test_bad_inputs_get_named_errors(op_type, inputs, message):
    op = get_op(op_type, "onegraph")
    with pytest.raises(ExecutionError, match=message):
        op.kernel(inputs, op.resolve_attrs({}), None)


@pytest.mark.parametrize("op_type, inputs, attrs, message", [
    ("SparseConcat", [np.zeros((1, 2), np.int64), np.ones(1), np.array([2, 2])],
     {"concat_dim": 0, "N": 2}, "needs 3\\*N inputs"),
    ("SparseConcat", [np.zeros((1, 2), np.int64), np.zeros((1, 2), np.int64), np.ones(1),
                      np.ones(1), np.array([2, 2]), np.array([2, 2])],
     {"concat_dim": 2, "N": 2}, "must be in range \\[-2, 2\\)"),
    ("SparseSoftmax", [np.zeros((1, 2), np.int64), np.ones(1, np.int32), np.array([2, 2])],
     {}, "float values"),
    ("SparseDenseCwiseMul", [np.zeros((1, 2), np.int64), np.ones(1), np.array([2, 3]),
                             np.ones((3, 2))], {}, "cannot broadcast"),
    ("SparseDenseCwiseDiv", [np.zeros((1, 2), np.int64), np.ones(1, np.int32),
                             np.array([2, 3]), np.zeros(3, np.int32)], {}, "division by zero"),
    ("SparseSlice", [np.zeros((1, 2), np.int64), np.ones(1), np.array([2, 3]),
                     np.array([0]), np.array([1, 1])], {}, "start and size of length 2"),
    ("SparseFillEmptyRows", [np.array([[-1, 0]]), np.ones(1), np.array([2, 3]),
                             np.float64(0)], {}, "indices\\(0, 0\\) is invalid: -1 < 0"),
])
def test_more_bad_inputs_get_named_errors(op_type, inputs, attrs, message):
    op = get_op(op_type, "onegraph")
    with pytest.raises(ExecutionError, match=message):
        op.kernel(inputs, op.resolve_attrs(attrs), None)


def test_integer_division_truncates_toward_zero():
    # C++'s int division (TF's kernel): -7 / 2 == -3, 7 / -2 == -3
    op = get_op("SparseDenseCwiseDiv", "onegraph")
    (out,) = op.kernel([np.array([[0], [1], [2]]), np.array([-7, 7, 6], np.int32),
                        np.array([3]), np.array([2, -2, 4], np.int32)], op.resolve_attrs({}),
                       None)
    np.testing.assert_array_equal(out, np.array([-3, -3, 1], np.int32))


def test_sparse_concat_builds_in_a_graph():
    g = og.Graph()
    with g.as_default():
        ind = [og.constant(np.array([[0, 1]], np.int64)), og.constant(np.array([[1, 0]],
                                                                               np.int64))]
        val = [og.constant(np.array([1.0])), og.constant(np.array([2.0]))]
        shp = [og.constant(np.array([2, 2], np.int64))] * 2
        outs = g.op("SparseConcat", ind + val + shp, {"concat_dim": 1, "N": 2},
                    domain="onegraph")
    got = og.Session(g).run(outs)
    np.testing.assert_array_equal(got[0], [[0, 1], [1, 2]])
    np.testing.assert_array_equal(got[1], [1.0, 2.0])
    np.testing.assert_array_equal(got[2], [2, 4])

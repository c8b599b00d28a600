"""Gradient rules of the sparse tensor ops (ops/sparse.py), TF's rules: only the values
(and dense operands) get gradients; indices and shapes get None."""

from __future__ import annotations

import numpy as np

DOMAIN = "onegraph"
_INT64 = 7  # ONNX TensorProto.INT64, Cast's `to`


def _to_dense(b, op, grads):
    """sparse_values: the gradient at each index (summed for one broadcast value);
    default_value: the gradient everywhere else, the total minus those (TF's
    _SparseToDenseGrad). Indices of any of TF's forms (scalar, vector, matrix) are read
    as (N, rank) rows."""
    (g,) = grads
    indices, shape, values = op.inputs[0], op.inputs[1], op.inputs[2]
    rows = b.op("Concat", [b.constant(np.array([-1], np.int64)), b.op("Shape", [shape])],
                {"axis": 0})
    at = b.op("GatherND", [g, b.op("Reshape", [b.op("Cast", [indices], {"to": _INT64}),
                                                rows])])
    rest = b.op("Sub", [b.op("ReduceSum", [g], {"keepdims": 0}),
                        b.op("ReduceSum", [at], {"keepdims": 0})])
    if values.shape is not None and len(values.shape) == 0:
        at = b.op("ReduceSum", [at], {"keepdims": 0})
    return [None, None, at, rest]


def _matmul(b, op, grads):
    """d/d(a_values): per entry, grad[m] . op(B)[k]; d/dB: op(A)^T @ grad, transposed
    back when adjoint_b (TF's _SparseTensorDenseMatMulGrad)."""
    (g,) = grads
    ind, val, shape, dense = op.inputs
    adj_a, adj_b = int(op.attrs.get("adjoint_a", 0)), int(op.attrs.get("adjoint_b", 0))
    b_grad = b.op("SparseTensorDenseMatMul", [ind, val, shape, g],
                  {"adjoint_a": 1 - adj_a}, domain=DOMAIN)
    if adj_b:
        b_grad = b.op("Transpose", [b_grad], {"perm": [1, 0]})
    a_grad = b.op("SparseTensorDenseMatMulGradValues", [ind, val, shape, dense, g],
                  {"adjoint_a": adj_a, "adjoint_b": adj_b}, domain=DOMAIN)
    return [None, a_grad, None, b_grad]


def _add(b, op, grads):
    """The sum's value gradient routed to a's and b's entries (TF's SparseAddGrad)."""
    g = grads[1]
    if g is None:
        return [None] * 7
    a_grad, b_grad = b.op("SparseAddGrad", [g, op.inputs[0], op.inputs[3], op.outputs[0]],
                          domain=DOMAIN)
    return [None, a_grad, None, None, b_grad, None, None]


def _dense_add(b, op, grads):
    """a_values: the gradient gathered at a's indices; b: the gradient itself."""
    (g,) = grads
    return [None, b.op("GatherND", [g, op.inputs[0]]), None, g]


def _reorder(b, op, grads):
    """values: the output values' gradient put back in input order."""
    g = grads[1]
    if g is None:
        return [None] * 3
    return [None, b.op("SparseReorderGrad", [op.inputs[0], g], domain=DOMAIN), None]


def _reduce_sum(b, op, grads):
    """values: the output gradient at the position each entry was summed into."""
    (g,) = grads
    return [None, b.op("SparseReduceSumGrad", [op.inputs[0], op.inputs[2], op.inputs[3], g],
                       domain=DOMAIN), None, None]


def _fill_empty_rows(b, op, grads):
    """values and default_value through TF's SparseFillEmptyRowsGrad."""
    g = grads[1]
    if g is None:
        return [None] * 4
    d_values, d_default = b.op("SparseFillEmptyRowsGrad", [op.outputs[3], g], domain=DOMAIN)
    return [None, d_values, None, d_default]


def _softmax(b, op, grads):
    """values: out * (grad - sum(out * grad)) over each innermost row."""
    (g,) = grads
    return [None, b.op("SparseSoftmaxGrad", [op.inputs[0], op.outputs[0], g],
                       domain=DOMAIN), None]


def _cwise(mode):
    def rule(b, op, grads):
        """values and dense of SparseDenseCwiseMul/Div (TF's rule)."""
        (g,) = grads
        d_values, d_dense = b.op("SparseDenseCwiseGrad", list(op.inputs) + [g],
                                 {"mode": mode}, domain=DOMAIN)
        return [None, d_values, None, d_dense]
    return rule


GRADIENTS: dict = {
    (DOMAIN, "SparseToDense"): _to_dense,
    (DOMAIN, "SparseTensorDenseMatMul"): _matmul,
    (DOMAIN, "SparseAdd"): _add,
    (DOMAIN, "SparseTensorDenseAdd"): _dense_add,
    (DOMAIN, "SparseReorder"): _reorder,
    (DOMAIN, "SparseReduceSum"): _reduce_sum,
    (DOMAIN, "SparseFillEmptyRows"): _fill_empty_rows,
    (DOMAIN, "SparseSoftmax"): _softmax,
    (DOMAIN, "SparseDenseCwiseMul"): _cwise("mul"),
    (DOMAIN, "SparseDenseCwiseDiv"): _cwise("div"),
}

"""Gradient rules of the indexing family.

Gather along axis 0 returns a *sparse* gradient: the builder's `b.indexed_slices(values,
indices, like)` (an `IndexedSlices` in onegraph.train) so embedding updates stay sparse.
"""

from __future__ import annotations


def _gather(b, op, grads):
    (g,) = grads
    params, indices = op.inputs
    axis = int(op.attrs["axis"])
    if axis == 0 and params.shape is not None:
        flat_idx = b.op("Reshape", [indices, b.constant_ints([-1])])
        row = [-1] + [d if d is not None else 0 for d in params.shape[1:]]
        if any(d is None for d in params.shape[1:]):
            # unknown row dims: take them from the run-time shape (0 copies in Reshape)
            row = [-1] + [0] * (len(params.shape) - 1)
            values = b.op("Reshape", [g, _row_shape(b, params)])
        else:
            values = b.op("Reshape", [g, b.constant_ints(row)])
        return [b.indexed_slices(values, flat_idx, params), None]
    # other axes: dense, by scattering into zeros with GatherElements' inverse
    raise NotImplementedError("Gather gradient is implemented for axis 0")


def _row_shape(b, params):
    shp = b.op("Shape", [params])
    tail = b.op("Slice", [shp, b.constant_ints([1]), b.constant_ints([2 ** 62])])
    return b.op("Concat", [b.constant_ints([-1]), tail], {"axis": 0})


def _slice(b, op, grads):
    ins = op.inputs
    inputs = [grads[0], ins[0]] + list(ins[1:])
    return [b.op("SliceGrad", inputs)] + [None] * (len(ins) - 1)


def _gather_elements(b, op, grads):
    x, idx = op.inputs
    zeros = b.op("ZerosLike", [x])
    return [b.op("ScatterElements", [zeros, idx, grads[0]],
                 {"axis": op.attrs["axis"], "reduction": "add"}), None]


def _gather_nd(b, op, grads):
    x, idx = op.inputs
    if int(op.attrs.get("batch_dims", 0) or 0):
        raise NotImplementedError("GatherND gradient with batch_dims")
    zeros = b.op("ZerosLike", [x])
    return [b.op("ScatterND", [zeros, idx, grads[0]], {"reduction": "add"}), None]


GRADIENTS = {"Gather": _gather, "GatherElements": _gather_elements, "GatherND": _gather_nd,
             "Slice": _slice}

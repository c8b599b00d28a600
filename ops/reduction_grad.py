"""Gradient rules of the reduction family: Reduce* through the fused ReduceGrad kernel,
CumSum through a reversed CumSum."""

from __future__ import annotations

_MODES = {"ReduceSum": "sum", "ReduceMean": "mean", "ReduceMax": "max", "ReduceMin": "min",
          "ReduceSumSquare": "sum_square", "ReduceL1": "l1", "ReduceL2": "l2",
          "ReduceLogSumExp": "logsumexp", "ReduceLogSum": "log_sum", "ReduceProd": "prod"}


def _reduce(mode):
    def rule(b, op, grads):
        x = op.inputs[0]
        axes = op.inputs[1] if len(op.inputs) > 1 else None
        attrs = {k: op.attrs[k] for k in ("axes", "keepdims", "noop_with_empty_axes")
                 if op.attrs.get(k) is not None}
        attrs["mode"] = mode
        inputs = [grads[0], x, op.outputs[0]] + ([axes] if axes is not None else [])
        return [b.op("ReduceGrad", inputs, attrs)] + [None] * (len(op.inputs) - 1)
    return rule


def _cum_sum(b, op, grads):
    attrs = op.attrs
    return [b.op("CumSum", [grads[0], op.inputs[1]],
                 {"exclusive": attrs["exclusive"], "reverse": 1 - int(attrs["reverse"])}),
            None]


def _top_k(b, op, grads):
    # Values = X gathered at Indices along axis (distinct): scatter dValues back
    g = grads[0]
    if g is None:
        return [None, None]
    x = op.inputs[0]
    return [b.op("ScatterElements", [b.op("ZerosLike", [x]), op.outputs[1], g],
                 {"axis": op.attrs["axis"], "reduction": "add"}), None]


GRADIENTS = {name: _reduce(mode) for name, mode in _MODES.items()}
GRADIENTS["CumSum"] = _cum_sum
GRADIENTS["TopK"] = _top_k

"""Gradient rules of the rnn family: RNN, GRU and LSTM through the BPTT kernels
`RNNGrad` / `GRUGrad` / `LSTMGrad` (`ops/rnn_grad_kernels.py`), which recompute the
forward pass and back-propagate through time.

Raises `GradientNotDefinedError` for what the kernels do not cover: non-default
activations (or activation_alpha/beta) and clip.
"""

from __future__ import annotations

from ..errors import GradientNotDefinedError

_DEFAULT_ACTS = {"RNN": ("tanh",), "GRU": ("sigmoid", "tanh"),
                 "LSTM": ("sigmoid", "tanh", "tanh")}
_PASS = ("activation_alpha", "activation_beta", "activations", "clip", "direction",
         "hidden_size", "layout", "linear_before_reset", "input_forget")


def _check_supported(name, attrs):
    acts = attrs.get("activations")
    if acts:
        acts = [str(a).lower() for a in acts]
        default = list(_DEFAULT_ACTS[name])
        if acts not in (default, default * 2):
            raise GradientNotDefinedError(
                f"{name} gradient supports the default activations {default}, not {acts}")
    if attrs.get("clip") is not None:
        raise GradientNotDefinedError(f"{name} gradient with clip is not supported")
    if int(attrs.get("layout", 0)) not in (0, 1):
        raise GradientNotDefinedError(f"{name} gradient: layout must be 0 or 1")


def _recurrent(name):
    n_fwd = 8 if name == "LSTM" else 6
    n_states = 3 if name == "LSTM" else 2

    def rule(b, op, grads):
        if all(g is None for g in grads):
            return [None] * len(op.inputs)
        attrs = op.attrs
        _check_supported(name, attrs)
        ins = list(op.inputs)
        fwd = ins + [None] * (n_fwd - len(ins))
        d_out = list(grads) + [None] * (n_states - len(grads))
        kattrs = {k: v for k, v in attrs.items() if k in _PASS and v is not None}
        outs = b.op(f"{name}Grad", fwd + d_out, kattrs, domain="onegraph")
        # outputs: dX, dW, dR, dB, d_initial_h[, d_initial_c, dP]; input 4 is
        # sequence_lens (integers)
        per_input = [outs[0], outs[1], outs[2], outs[3], None, outs[4]]
        if name == "LSTM":
            per_input += [outs[5], outs[6]]
        return [None if t is None else gr for t, gr in zip(ins, per_input)]
    return rule


GRADIENTS = {"GRU": _recurrent("GRU"), "LSTM": _recurrent("LSTM"), "RNN": _recurrent("RNN")}

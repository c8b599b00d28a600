"""Operators: BPTT gradient kernels of the recurrent ops (`onegraph` domain).

`RNNGrad`, `GRUGrad` and `LSTMGrad` take the forward op's inputs (all positions, None
where omitted) followed by the gradients of its outputs (Y, Y_h[, Y_c], None where no
gradient arrives), recompute the forward pass keeping each step's gates, then
back-propagate through time. Each step is vectorised over batch and hidden units; the
input projections' gradients of all steps are gathered and turned into dX, dW and the
bias gradient with one GEMM each after the time loop.

Supported: the default activations (RNN tanh; GRU sigmoid/tanh; LSTM sigmoid/tanh/tanh),
no clip, forward/reverse/bidirectional, layout 0 and 1, sequence_lens, GRU
linear_before_reset, LSTM peepholes and input_forget. Other attribute combinations
raise `GradientNotDefinedError` when the gradient is built (see `ops/rnn_grad.py`).

Outputs: dX, dW, dR, dB, d_initial_h (and d_initial_c, dP for LSTM); dB, d_initial_h,
d_initial_c and dP are returned even when the forward op omitted that input (zeros).
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from .registry import TensorInfo, define
from .rnn import input_projection

DOMAIN = "onegraph"

_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_DIRS = {"forward": 1, "reverse": 1, "bidirectional": 2}


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _get(inputs, i):
    return inputs[i] if len(inputs) > i else None


def _grad_kernel(op_name):
    gates = _GATES[op_name]
    is_lstm = op_name == "LSTM"
    n_fwd = 8 if is_lstm else 6  # forward inputs before the output gradients

    def kernel(inputs, attrs, ctx):
        x = np.asarray(inputs[0])
        out_dtype = x.dtype
        dt = x.dtype if x.dtype in (np.float32, np.float64) else np.dtype(np.float32)
        layout = int(attrs["layout"])
        x = x.astype(dt, copy=False)
        w = np.asarray(inputs[1], dt)
        r = np.asarray(inputs[2], dt)
        bias = _get(inputs, 3)
        seq_lens = _get(inputs, 4)
        init_h = _get(inputs, 5)
        init_c = _get(inputs, 6) if is_lstm else None
        peep = _get(inputs, 7) if is_lstm else None
        d_y = _get(inputs, n_fwd)
        d_yh = _get(inputs, n_fwd + 1)
        d_yc = _get(inputs, n_fwd + 2) if is_lstm else None

        def tm(v, kind):
            """To time-major float arrays (layout 1 inputs are batch-major)."""
            if v is None:
                return None
            v = np.asarray(v, dt)
            if layout == 1:
                v = v.transpose(1, 2, 0, 3) if kind == "y" else v.transpose(1, 0, 2)
            return v

        x = tm(x, "x")
        t_len, batch, in_size = x.shape
        nd = _DIRS[attrs["direction"]]
        hs = r.shape[-1]
        gh = gates * hs
        if w.shape != (nd, gh, in_size) or r.shape != (nd, gh, hs):
            raise ShapeError(f"{op_name}Grad: W {w.shape} / R {r.shape} do not match X "
                             f"{x.shape} with {nd} directions")
        if bias is None:
            wb = rb = np.zeros((nd, gh), dt)
        else:
            bias = np.asarray(bias, dt)
            wb, rb = bias[:, :gh], bias[:, gh:]
        h0 = tm(init_h, "s")
        h0 = np.zeros((nd, batch, hs), dt) if h0 is None else h0
        c0 = tm(init_c, "s")
        c0 = np.zeros((nd, batch, hs), dt) if c0 is None else c0
        p = None if peep is None else np.asarray(peep, dt)
        d_y = tm(d_y, "y")
        d_yh = tm(d_yh, "s")
        d_yc = tm(d_yc, "s")
        valid = None
        if seq_lens is not None:
            lens = np.asarray(seq_lens).astype(np.int64).reshape(-1)
            if np.any(lens < t_len):
                valid = (np.arange(t_len)[:, None] < lens[None, :])[:, :, None].astype(dt)
        lbr = op_name == "GRU" and bool(attrs["linear_before_reset"])
        ifg = is_lstm and bool(attrs["input_forget"])

        xw = input_projection(x, w, wb, rb, hs, lbr)

        d_xw = np.zeros((t_len, batch, nd, gh), dt)
        d_r = np.zeros_like(r)
        d_rbh = np.zeros((nd, hs), dt)  # GRU linear_before_reset: Rb_h apart
        d_h0 = np.zeros((nd, batch, hs), dt)
        d_c0 = np.zeros((nd, batch, hs), dt)
        d_p = np.zeros((nd, 3 * hs), dt)
        reverse = attrs["direction"] == "reverse"
        for d in range(nd):
            rd = r[d]
            steps = list(range(t_len - 1, -1, -1) if (reverse or d == 1) else range(t_len))
            # forward, keeping what the backward step needs
            h, c = h0[d], c0[d]
            saved = []
            for t in steps:
                pre = xw[t, :, d]
                if op_name == "RNN":
                    h_new = np.tanh(pre + h @ rd.T)
                    saved.append((h, h_new))
                    c_new = None
                elif op_name == "GRU":
                    hr = h @ rd[:2 * hs].T
                    z = _sigmoid(pre[:, :hs] + hr[:, :hs])
                    rg = _sigmoid(pre[:, hs:2 * hs] + hr[:, hs:])
                    if lbr:
                        u = h @ rd[2 * hs:].T + rb[d, 2 * hs:]
                        hh = np.tanh(pre[:, 2 * hs:] + rg * u)
                    else:
                        u = None
                        hh = np.tanh(pre[:, 2 * hs:] + (rg * h) @ rd[2 * hs:].T)
                    h_new = (1 - z) * hh + z * h
                    saved.append((h, z, rg, hh, u))
                    c_new = None
                else:
                    a = pre + h @ rd.T
                    pi, po, pf, pc = (a[:, k * hs:(k + 1) * hs] for k in range(4))
                    if p is not None:
                        pi = pi + p[d, :hs] * c
                        pf = pf + p[d, 2 * hs:] * c
                    i = _sigmoid(pi)
                    f = (1 - i) if ifg else _sigmoid(pf)
                    g = np.tanh(pc)
                    c_new = f * c + i * g
                    if p is not None:
                        po = po + p[d, hs:2 * hs] * c_new
                    o = _sigmoid(po)
                    tc = np.tanh(c_new)
                    h_new = o * tc
                    saved.append((h, c, i, f, g, o, c_new, tc))
                if valid is None:
                    h = h_new
                    c = c_new if is_lstm else c
                else:
                    m = valid[t]
                    h = m * h_new + (1 - m) * h
                    if is_lstm:
                        c = m * c_new + (1 - m) * c
            # backward through time
            dh = np.zeros((batch, hs), dt) if d_yh is None else d_yh[d].copy()
            dc = np.zeros((batch, hs), dt) if d_yc is None else d_yc[d].copy()
            for t, st in zip(reversed(steps), reversed(saved)):
                dh_new = dh if d_y is None else dh + d_y[t, d]
                dc_new = dc
                if valid is not None:
                    m = valid[t]
                    dh_new = m * dh_new
                    dc_new = m * dc
                    dh_keep, dc_keep = (1 - m) * dh, (1 - m) * dc
                if op_name == "RNN":
                    h_prev, h_new = st
                    da = dh_new * (1 - h_new * h_new)
                    d_xw[t, :, d] = da
                    d_r[d] += da.T @ h_prev
                    dh = da @ rd
                elif op_name == "GRU":
                    h_prev, z, rg, hh, u = st
                    dhh = dh_new * (1 - z)
                    dz = dh_new * (h_prev - hh)
                    dh = dh_new * z
                    da_h = dhh * (1 - hh * hh)
                    if lbr:
                        dr = da_h * u
                        du = da_h * rg
                        d_r[d, 2 * hs:] += du.T @ h_prev
                        d_rbh[d] += du.sum(axis=0)
                        dh = dh + du @ rd[2 * hs:]
                    else:
                        q = rg * h_prev
                        d_r[d, 2 * hs:] += da_h.T @ q
                        dq = da_h @ rd[2 * hs:]
                        dr = dq * h_prev
                        dh = dh + dq * rg
                    da_z = dz * z * (1 - z)
                    da_r = dr * rg * (1 - rg)
                    da_zr = np.concatenate([da_z, da_r], axis=1)
                    d_r[d, :2 * hs] += da_zr.T @ h_prev
                    dh = dh + da_zr @ rd[:2 * hs]
                    d_xw[t, :, d] = np.concatenate([da_zr, da_h], axis=1)
                else:
                    h_prev, c_prev, i, f, g, o, c_new, tc = st
                    do = dh_new * tc
                    dpo = do * o * (1 - o)
                    dcc = dc_new + dh_new * o * (1 - tc * tc)
                    if p is not None:
                        dcc = dcc + dpo * p[d, hs:2 * hs]
                        d_p[d, hs:2 * hs] += (dpo * c_new).sum(axis=0)
                    df = dcc * c_prev
                    di = dcc * g
                    dpc = dcc * i * (1 - g * g)
                    dc = dcc * f
                    if ifg:
                        di = di - df
                        dpf = np.zeros_like(df)
                    else:
                        dpf = df * f * (1 - f)
                    dpi = di * i * (1 - i)
                    if p is not None:
                        dc = dc + dpi * p[d, :hs] + dpf * p[d, 2 * hs:]
                        d_p[d, :hs] += (dpi * c_prev).sum(axis=0)
                        d_p[d, 2 * hs:] += (dpf * c_prev).sum(axis=0)
                    da = np.concatenate([dpi, dpo, dpf, dpc], axis=1)
                    d_xw[t, :, d] = da
                    d_r[d] += da.T @ h_prev
                    dh = da @ rd
                if valid is not None:
                    dh = dh + dh_keep
                    if is_lstm:
                        dc = dc + dc_keep
            d_h0[d] = dh
            if is_lstm:
                d_c0[d] = dc

        flat = d_xw.reshape(t_len * batch, nd, gh)
        d_w = np.einsum("kdg,ki->dgi", flat, x.reshape(t_len * batch, in_size))
        d_x = (flat.reshape(t_len * batch, nd * gh) @ w.reshape(nd * gh, in_size))
        d_x = d_x.reshape(t_len, batch, in_size)
        d_wb = flat.sum(axis=0)
        d_rb = d_wb.copy()
        if lbr:
            d_rb[:, 2 * hs:] = d_rbh
        d_b = np.concatenate([d_wb, d_rb], axis=1)
        if layout == 1:
            d_x = d_x.transpose(1, 0, 2)
            d_h0 = d_h0.transpose(1, 0, 2)
            d_c0 = d_c0.transpose(1, 0, 2)
        outs = [d_x, d_w, d_r, d_b, d_h0]
        if is_lstm:
            outs += [d_c0, d_p]
        return tuple(np.ascontiguousarray(v).astype(out_dtype, copy=False) for v in outs)

    kernel.__doc__ = f"Gradients of ONNX {op_name} by back-propagation through time."
    return kernel


def _grad_infer(op_name):
    is_lstm = op_name == "LSTM"

    def infer(attrs, inputs):
        def like(i):
            t = inputs[i] if len(inputs) > i else None
            return TensorInfo(inputs[0].dtype, None if t is None else t.shape)

        outs = [like(0), like(1), like(2), like(3), like(5)]
        if is_lstm:
            outs += [like(6), like(7)]
        return outs

    return infer


_ATTRS = [("activation_alpha", "floats", None), ("activation_beta", "floats", None),
          ("activations", "strings", None), ("clip", "float", None),
          ("direction", "string", "forward"), ("hidden_size", "int", None),
          ("layout", "int", 0)]
_FWD = ["X", "W", "R", "B?", "sequence_lens?", "initial_h?"]
_OUT = ["dX", "dW", "dR", "dB", "d_initial_h"]

OPS = (
    define("GRUGrad", _FWD + ["dY?", "dY_h?"], _OUT, _grad_kernel("GRU"),
           _ATTRS + [("linear_before_reset", "int", 0)], infer=_grad_infer("GRU"),
           domain=DOMAIN, doc="BPTT gradients of GRU"),
    define("LSTMGrad", _FWD + ["initial_c?", "P?", "dY?", "dY_h?", "dY_c?"],
           _OUT + ["d_initial_c", "dP"], _grad_kernel("LSTM"),
           _ATTRS + [("input_forget", "int", 0)], infer=_grad_infer("LSTM"),
           domain=DOMAIN, doc="BPTT gradients of LSTM"),
    define("RNNGrad", _FWD + ["dY?", "dY_h?"], _OUT, _grad_kernel("RNN"), _ATTRS,
           infer=_grad_infer("RNN"), domain=DOMAIN, doc="BPTT gradients of RNN"),
)

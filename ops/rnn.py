"""Operators: rnn family (definitions, kernels, inference, gradients).

The ONNX recurrent ops RNN, GRU and LSTM (opset 22 semantics, incl. `layout`).

Kernels work in time-major order ``[T, B, ...]`` internally (layout 1 is transposed in
and out). The input projection ``X @ W^T (+ Wb + Rb)`` of every time step and both
directions is one GEMM before the time loop; inside the loop each step is one
``H @ R^T`` GEMM plus vectorised gate math over batch and hidden units. The per-step
cell math lives in the small `_*_cell` functions so a gradient rule can reuse it.

``sequence_lens`` is handled by masking: at step t a batch entry with length <= t keeps
its state and writes zeros to Y, so Y_h / Y_c hold the last valid state (for the
reverse direction each entry starts at its own last valid step). float16/bfloat16 are
computed in float32 and cast back; float32/float64 are computed as given.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .activation import relu
from .registry import TensorInfo, define

# ---------------------------------------------------------------------------------------
# Activation functions (names are case-insensitive, as in onnxruntime)

# name: (uses alpha, uses beta, default alpha, default beta)
_ACT_PARAMS = {
    "sigmoid": (False, False, 0.0, 0.0),
    "tanh": (False, False, 0.0, 0.0),
    "relu": (False, False, 0.0, 0.0),
    "hardsigmoid": (True, True, 0.2, 0.5),
    "leakyrelu": (True, False, 0.01, 0.0),
    "thresholdedrelu": (True, False, 1.0, 0.0),
    "scaledtanh": (True, True, 1.0, 1.0),
    "affine": (True, True, 1.0, 0.0),
    "elu": (True, False, 1.0, 0.0),
    "softsign": (False, False, 0.0, 0.0),
    "softplus": (False, False, 0.0, 0.0),
}


def _sigmoid(x, a, b):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _act_fn(name):
    """Return fn(x, alpha, beta) for an activation name."""
    return {
        "sigmoid": _sigmoid,
        "tanh": lambda x, a, b: np.tanh(x),
        "relu": lambda x, a, b: relu(x),
        "hardsigmoid": lambda x, a, b: np.clip(a * x + b, 0, 1),
        "leakyrelu": lambda x, a, b: np.where(x < 0, a * x, x),
        "thresholdedrelu": lambda x, a, b: np.where(x > a, x, 0),
        "scaledtanh": lambda x, a, b: a * np.tanh(b * x),
        "affine": lambda x, a, b: a * x + b,
        "elu": lambda x, a, b: np.where(x < 0, a * np.expm1(np.minimum(x, 0)), x),
        "softsign": lambda x, a, b: x / (1 + np.abs(x)),
        "softplus": lambda x, a, b: np.logaddexp(0, x),
    }[name]


def _bind(name, alpha, beta, dtype):
    fn = _act_fn(name)
    a = dtype.type(alpha)
    b = dtype.type(beta)

    def act(x):
        return np.asarray(fn(x, a, b), dtype=dtype)
    act.__name__ = name
    return act


def _activations(op_name, attrs, per_dir, defaults, num_dirs, dtype):
    """Per-direction lists of bound activation functions.

    `activation_alpha` / `activation_beta` are consumed in order by the activations
    that take them (as onnxruntime does); missing values use the operator defaults.
    """
    names = attrs["activations"]
    if names is None or len(names) == 0:
        names = list(defaults) * num_dirs
    names = [str(n).lower() for n in names]
    if len(names) == per_dir and num_dirs == 2:
        names = names * 2
    if len(names) != per_dir * num_dirs:
        raise OpAttributeError(f"{op_name}: expected {per_dir * num_dirs} activations, "
                               f"got {len(names)}")
    alphas = list(attrs["activation_alpha"] or [])
    betas = list(attrs["activation_beta"] or [])
    bound = []
    for name in names:
        if name not in _ACT_PARAMS:
            raise OpAttributeError(f"{op_name}: unsupported activation {name!r}")
        uses_a, uses_b, alpha, beta = _ACT_PARAMS[name]
        if uses_a and alphas:
            alpha = alphas.pop(0)
        if uses_b and betas:
            beta = betas.pop(0)
        bound.append(_bind(name, alpha, beta, dtype))
    return [bound[d * per_dir:(d + 1) * per_dir] for d in range(num_dirs)]


def _clipper(clip, dtype):
    if clip is None:
        return lambda x: x
    c = dtype.type(clip)
    return lambda x: np.clip(x, -c, c)


# ---------------------------------------------------------------------------------------
# Per-step cell math (shared with a future gradient rule)
#
def input_projection(x, w, wb, rb, hs, linear_before_reset):
    """Every step's input GEMM at once: x [T, B, I] @ W [D, G*H, I]^T plus the biases,
    as [T, B, D, G*H]. Wb and Rb ([D, G*H] each) are folded in, except that a GRU with
    linear_before_reset keeps Rb_h apart, because its reset gate multiplies it."""
    t_len, batch, in_size = x.shape
    nd, gh = wb.shape
    folded = wb + rb
    if linear_before_reset:
        folded[:, 2 * hs:] = wb[:, 2 * hs:]
    xw = x.reshape(t_len * batch, in_size) @ w.reshape(nd * gh, in_size).T
    return xw.reshape(t_len, batch, nd, gh) + folded


# xw: this step's input projection [B, G*H] with biases folded in; h, c: [B, H];
# rt: R^T of one direction [H, G*H].


def _rnn_cell(xw, h, rt, f, clip):
    """H_t = f(clip(X_t W^T + H_{t-1} R^T + Wb + Rb))."""
    return f(clip(xw + h @ rt))


def _gru_cell(xw, h, rt, rbh, f, g, clip, linear_before_reset):
    """GRU step with gate order z, r, h.

    With linear_before_reset the reset gate multiplies (H R_h^T + Rb_h); then `xw`'s h
    block must not include Rb_h and `rbh` carries it; otherwise it is folded into `xw`.
    """
    hs = h.shape[-1]
    hr = h @ rt[:, :2 * hs]
    z = f(clip(xw[:, :hs] + hr[:, :hs]))
    r = f(clip(xw[:, hs:2 * hs] + hr[:, hs:]))
    if linear_before_reset:
        hh = g(clip(xw[:, 2 * hs:] + r * (h @ rt[:, 2 * hs:] + rbh)))
    else:
        hh = g(clip(xw[:, 2 * hs:] + (r * h) @ rt[:, 2 * hs:]))
    return (1 - z) * hh + z * h


def _lstm_cell(xw, h, c, rt, p, f, g, act_h, clip, input_forget):
    """LSTM step with gate order i, o, f, c and peepholes p = (Pi, Po, Pf) or None.

    Returns (H_t, C_t).
    """
    hs = h.shape[-1]
    pre = xw + h @ rt
    pi = pre[:, :hs]
    po = pre[:, hs:2 * hs]
    pf = pre[:, 2 * hs:3 * hs]
    pc = pre[:, 3 * hs:]
    if p is not None:
        pi = pi + p[0] * c
        pf = pf + p[2] * c
    i = f(clip(pi))
    ft = (1 - i) if input_forget else f(clip(pf))
    c_new = ft * c + i * g(clip(pc))
    if p is not None:
        po = po + p[1] * c_new
    o = f(clip(po))
    return o * act_h(c_new), c_new


# ---------------------------------------------------------------------------------------
# Shared driver

_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_DEFAULT_ACTS = {"RNN": ("Tanh",), "GRU": ("Sigmoid", "Tanh"),
                 "LSTM": ("Sigmoid", "Tanh", "Tanh")}
_NUM_DIRS = {"forward": 1, "reverse": 1, "bidirectional": 2}


def _num_dirs(op_name, attrs):
    direction = attrs["direction"]
    if direction not in _NUM_DIRS:
        raise OpAttributeError(f"{op_name}: direction must be forward, reverse or "
                               f"bidirectional, got {direction!r}")
    return _NUM_DIRS[direction]


def _hidden_size(op_name, attrs, w_shape, r_shape):
    gates = _GATES[op_name]
    if attrs["hidden_size"] is not None:
        return int(attrs["hidden_size"])
    if r_shape is not None and r_shape[-1] is not None:
        return r_shape[-1]
    if w_shape is not None and w_shape[1] is not None:
        return w_shape[1] // gates
    return None


def _compute_dtype(dt):
    return dt if dt in (np.dtype(np.float32), np.dtype(np.float64)) else np.dtype(np.float32)


def _check(op_name, cond, msg):
    if not cond:
        raise ShapeError(f"{op_name}: {msg}")


def _recurrent_kernel(op_name):
    gates = _GATES[op_name]
    is_lstm = op_name == "LSTM"

    def kernel(inputs, attrs, ctx):
        x = np.asarray(inputs[0])
        out_dtype = x.dtype
        dt = _compute_dtype(out_dtype)
        x = x.astype(dt, copy=False)
        w = np.asarray(inputs[1], dtype=dt)
        r = np.asarray(inputs[2], dtype=dt)
        bias = inputs[3] if len(inputs) > 3 else None
        seq_lens = inputs[4] if len(inputs) > 4 else None
        init_h = inputs[5] if len(inputs) > 5 else None
        init_c = inputs[6] if is_lstm and len(inputs) > 6 else None
        peep = inputs[7] if is_lstm and len(inputs) > 7 else None

        layout = attrs["layout"]
        if layout not in (0, 1):
            raise OpAttributeError(f"{op_name}: layout must be 0 or 1, got {layout}")
        nd = _num_dirs(op_name, attrs)
        _check(op_name, x.ndim == 3, f"X must be rank 3, got shape {x.shape}")
        if layout == 1:
            x = x.transpose(1, 0, 2)
        t_len, batch, in_size = x.shape
        hs = _hidden_size(op_name, attrs, w.shape, r.shape)
        gh = gates * hs
        _check(op_name, w.shape == (nd, gh, in_size),
               f"W shape {w.shape}, want {(nd, gh, in_size)}")
        _check(op_name, r.shape == (nd, gh, hs), f"R shape {r.shape}, want {(nd, gh, hs)}")

        if bias is None:
            wb = np.zeros((nd, gh), dt)
            rb = np.zeros((nd, gh), dt)
        else:
            bias = np.asarray(bias, dtype=dt)
            _check(op_name, bias.shape == (nd, 2 * gh),
                   f"B shape {bias.shape}, want {(nd, 2 * gh)}")
            wb, rb = bias[:, :gh], bias[:, gh:]

        def state(value, what):
            if value is None:
                return np.zeros((nd, batch, hs), dt)
            value = np.asarray(value, dtype=dt)
            if layout == 1:
                value = value.transpose(1, 0, 2)
            _check(op_name, value.shape == (nd, batch, hs),
                   f"{what} has shape {value.shape} (time-major), want {(nd, batch, hs)}")
            return value

        h0 = state(init_h, "initial_h")
        c0 = state(init_c, "initial_c") if is_lstm else None

        lbr = op_name == "GRU" and bool(attrs["linear_before_reset"])
        xw = input_projection(x, w, wb, rb, hs, lbr)

        valid = None
        if seq_lens is not None:
            lens = np.asarray(seq_lens).astype(np.int64).reshape(-1)
            _check(op_name, lens.shape == (batch,),
                   f"sequence_lens shape {lens.shape}, want {(batch,)}")
            bad = np.flatnonzero((lens < 0) | (lens > t_len))
            if bad.size:
                raise ShapeError(f"{op_name}: sequence_lens[{bad[0]}] = {lens[bad[0]]} "
                                 f"is outside [0, {t_len}], the sequence length")
            if np.any(lens < t_len):
                valid = (np.arange(t_len)[:, None] < lens[None, :])[:, :, None]  # [T,B,1]

        acts = _activations(op_name, attrs, len(_DEFAULT_ACTS[op_name]),
                            _DEFAULT_ACTS[op_name], nd, dt)
        clip = _clipper(attrs["clip"], dt)
        if peep is not None:
            peep = np.asarray(peep, dtype=dt)
            _check(op_name, peep.shape == (nd, 3 * hs),
                   f"P shape {peep.shape}, want {(nd, 3 * hs)}")

        y = np.zeros((t_len, nd, batch, hs), dt)
        y_h = np.empty((nd, batch, hs), dt)
        y_c = np.empty((nd, batch, hs), dt) if is_lstm else None
        reverse = attrs["direction"] == "reverse"
        for d in range(nd):
            rt = r[d].T
            h = h0[d]
            c = c0[d] if is_lstm else None
            steps = range(t_len - 1, -1, -1) if (reverse or d == 1) else range(t_len)
            if op_name == "RNN":
                def step(t, h, c, f=acts[d][0]):
                    return _rnn_cell(xw[t, :, d], h, rt, f, clip), None
            elif op_name == "GRU":
                rbh = rb[d, 2 * hs:]

                def step(t, h, c, f=acts[d][0], g=acts[d][1]):
                    return _gru_cell(xw[t, :, d], h, rt, rbh, f, g, clip, lbr), None
            else:
                p = None if peep is None else (peep[d, :hs], peep[d, hs:2 * hs],
                                               peep[d, 2 * hs:])
                ifg = bool(attrs["input_forget"])

                def step(t, h, c, f=acts[d][0], g=acts[d][1], ah=acts[d][2]):
                    return _lstm_cell(xw[t, :, d], h, c, rt, p, f, g, ah, clip, ifg)
            for t in steps:
                h_new, c_new = step(t, h, c)
                if valid is None:
                    h, c = h_new, c_new
                    y[t, d] = h_new
                else:
                    m = valid[t]
                    h = np.where(m, h_new, h)
                    if is_lstm:
                        c = np.where(m, c_new, c)
                    y[t, d] = np.where(m, h_new, 0)
            y_h[d] = h
            if is_lstm:
                y_c[d] = c

        if layout == 1:
            y = y.transpose(2, 0, 1, 3)
            y_h = y_h.transpose(1, 0, 2)
            y_c = y_c.transpose(1, 0, 2) if is_lstm else None
        outs = (y, y_h, y_c) if is_lstm else (y, y_h)
        return tuple(np.ascontiguousarray(o).astype(out_dtype, copy=False) for o in outs)

    kernel.__doc__ = f"ONNX {op_name}: time loop over precomputed input projections."
    return kernel


# ---------------------------------------------------------------------------------------
# Inference


def _dim(shape, i):
    return None if shape is None else shape[i]


def _recurrent_infer(op_name):
    gates = _GATES[op_name]

    def infer(attrs, inputs):
        x, w, r = inputs[0], inputs[1], inputs[2]
        nd = _num_dirs(op_name, attrs)
        layout = attrs["layout"]
        if layout not in (0, 1):
            raise OpAttributeError(f"{op_name}: layout must be 0 or 1, got {layout}")
        xs = x.shape if x is not None else None
        ws = w.shape if w is not None else None
        rs = r.shape if r is not None else None
        if xs is not None and len(xs) != 3:
            raise ShapeError(f"{op_name}: X must be rank 3, got shape {xs}")
        for nm, s in (("W", ws), ("R", rs)):
            if s is not None and len(s) != 3:
                raise ShapeError(f"{op_name}: {nm} must be rank 3, got shape {s}")
            if s is not None and s[0] is not None and s[0] != nd:
                raise ShapeError(f"{op_name}: {nm} has {s[0]} directions, "
                                 f"direction={attrs['direction']!r} needs {nd}")
        hs = _hidden_size(op_name, attrs, ws, rs)
        if hs is not None:
            for nm, s in (("W", ws), ("R", rs)):
                if s is not None and s[1] is not None and s[1] != gates * hs:
                    raise ShapeError(f"{op_name}: {nm} dim 1 is {s[1]}, want {gates * hs}")
            if rs is not None and rs[2] is not None and rs[2] != hs:
                raise ShapeError(f"{op_name}: R dim 2 is {rs[2]}, want {hs}")
        if xs is not None and ws is not None and None not in (xs[2], ws[2]) \
                and xs[2] != ws[2]:
            raise ShapeError(f"{op_name}: X input size {xs[2]} != W input size {ws[2]}")
        if layout == 0:
            t_len, batch = _dim(xs, 0), _dim(xs, 1)
            y_shape = (t_len, nd, batch, hs)
            s_shape = (nd, batch, hs)
        else:
            batch, t_len = _dim(xs, 0), _dim(xs, 1)
            y_shape = (batch, t_len, nd, hs)
            s_shape = (batch, nd, hs)
        dtype = x.dtype if x is not None else None
        outs = [TensorInfo(dtype, y_shape), TensorInfo(dtype, s_shape)]
        if op_name == "LSTM":
            outs.append(TensorInfo(dtype, s_shape))
        return outs

    return infer


# ---------------------------------------------------------------------------------------
# Definitions

_COMMON_ATTRS = [
    ("activation_alpha", "floats", None),
    ("activation_beta", "floats", None),
    ("clip", "float", None),
    ("direction", "string", "forward"),
    ("hidden_size", "int", None),
    ("layout", "int", 0),
]
_FLOATS = ("bfloat16", "float16", "float32", "float64")


def _build():
    rnn_in = ["X", "W", "R", "B?", "sequence_lens?", "initial_h?"]
    ops = [
        define("RNN", rnn_in, ["Y?", "Y_h?"], _recurrent_kernel("RNN"),
               attrs=_COMMON_ATTRS + [("activations", "strings", None)],
               infer=_recurrent_infer("RNN"), dtypes=_FLOATS, since_version=22),
        define("GRU", rnn_in, ["Y?", "Y_h?"], _recurrent_kernel("GRU"),
               attrs=_COMMON_ATTRS + [("activations", "strings", None),
                                      ("linear_before_reset", "int", 0)],
               infer=_recurrent_infer("GRU"), dtypes=_FLOATS, since_version=22),
        define("LSTM", rnn_in + ["initial_c?", "P?"], ["Y?", "Y_h?", "Y_c?"],
               _recurrent_kernel("LSTM"),
               attrs=_COMMON_ATTRS + [("activations", "strings", None),
                                      ("input_forget", "int", 0)],
               infer=_recurrent_infer("LSTM"), dtypes=_FLOATS, since_version=22),
    ]
    return tuple(sorted(ops, key=lambda op: op.name))


OPS = _build()

KNOWN_FAILURES: dict[str, str] = {}


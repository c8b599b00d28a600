"""Operators: rnn family (definitions, kernels, inference, gradients).

The ONNX recurrent ops RNN, GRU and LSTM (opset 22 semantics, incl. `layout`).

Kernels work in time-major order ``[T, B, ...]`` internally (layout 1 is transposed in
and out). The input projection ``X @ W^T (+ Wb + Rb)`` of every time step and both
directions is one GEMM before the time loop. The directions of a bidirectional op run
in the same loop, stacked; each step is one ``H @ R^T`` GEMM over them plus a fixed
number of in-place numpy calls over batch and hidden units (`_rnn_loop`, `_gru_loop`,
`_lstm_loop`), into buffers allocated once per run. The gradient kernels
(`rnn_grad_kernels.py`) recompute the forward pass with their own loop, which keeps
every step's gates.

``sequence_lens`` is handled by masking: at step t a batch entry with length <= t keeps
its state and writes zeros to Y, so Y_h / Y_c hold the last valid state (for the
reverse direction each entry starts at its own last valid step). An entry of length 0
keeps its initial state, as TensorFlow's dynamic_rnn does; the ONNX spec leaves it open
(onnx/onnx#1674) and onnxruntime writes zeros to Y_h / Y_c instead. float16/bfloat16 are
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


def _sigmoid(x, out):
    """1 / (1 + e^-x) into out (which may be x). e^-x overflows to inf for x below
    about -88 (float32), which gives exactly 0; callers run under
    np.errstate(over="ignore", under="ignore")."""
    # not np.negative: numpy 2.4's float32 negative writes wrong values into a strided
    # out whose last axis has length 1 (a gate's [D, B, 1] slice when H = 1)
    np.multiply(x, x.dtype.type(-1), out=out)
    np.exp(out, out=out)
    out += 1
    return np.reciprocal(out, out=out)


def _act_fn(name):
    """Return fn(x, alpha, beta, out) -> the activation of x, written into `out` by the
    common ones (sigmoid, tanh, relu), returned as a new array by the others."""
    return {
        "sigmoid": lambda x, a, b, out: _sigmoid(x, out),
        "tanh": lambda x, a, b, out: np.tanh(x, out=out),
        "relu": lambda x, a, b, out: relu(x, out=out),
        "hardsigmoid": lambda x, a, b, out: np.clip(a * x + b, 0, 1),
        "leakyrelu": lambda x, a, b, out: np.where(x < 0, a * x, x),
        "thresholdedrelu": lambda x, a, b, out: np.where(x > a, x, 0),
        "scaledtanh": lambda x, a, b, out: a * np.tanh(b * x),
        "affine": lambda x, a, b, out: a * x + b,
        "elu": lambda x, a, b, out: np.where(x < 0, a * np.expm1(np.minimum(x, 0)), x),
        "softsign": lambda x, a, b, out: x / (1 + np.abs(x)),
        "softplus": lambda x, a, b, out: np.logaddexp(0, x),
    }[name]


def _bind(name, alpha, beta, dtype):
    """An activation act(x, out=None) that writes its result into `out` (default: x
    itself, arrays of `dtype`); act.key tells activations with the same name and
    parameters apart."""
    fn = _act_fn(name)
    a = dtype.type(alpha)
    b = dtype.type(beta)

    def act(x, out=None):
        out = x if out is None else out
        y = fn(x, a, b, out)
        if y is not out:
            out[...] = y
        return out
    act.__name__ = name
    act.key = (name, float(a), float(b))
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
    # The spec asks for both directions' lists when bidirectional (onnxruntime refuses
    # one list): one list is not silently applied to both.
    if len(names) != per_dir * num_dirs:
        per = f" ({per_dir} per direction, bidirectional)" if num_dirs == 2 else ""
        raise OpAttributeError(f"{op_name}: expected {per_dir * num_dirs} activations"
                               f"{per}, got {len(names)}")
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


def _check_clip(op_name, attrs):
    """A clip is a threshold: [-clip, clip] is empty below 0 (and for NaN)."""
    clip = attrs["clip"]
    if clip is not None and not clip >= 0:
        raise OpAttributeError(f"{op_name}: clip must be a threshold >= 0, got {clip}")


def _clipper(clip, dtype):
    """clip_(x): x clipped to [-clip, clip] in place, or None without a clip."""
    if clip is None:
        return None
    c = dtype.type(clip)
    return lambda x: np.clip(x, -c, c, out=x)


def _for_directions(acts):
    """One in-place activation over the stacked directions [D, ...]: the activation
    itself when every direction has the same one, else one call per direction."""
    if all(act.key == acts[0].key for act in acts):
        return acts[0]

    def per_direction(x, out=None):
        out = x if out is None else out
        for d, act in enumerate(acts):
            act(x[d], out[d])
        return out
    return per_direction


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


# ---------------------------------------------------------------------------------------
# The time loops
#
# Both directions of a bidirectional op run in the same loop, stacked as [D, B, ...]:
# at loop step s, a forward direction reads time s and a reversed one time T-1-s.
# xs [T, D, B, G*H]: the input projections (biases folded in) in that order; rt
# [D, H, G*H]: R^T per direction; h, c [D, B, H]: state buffers the loop owns;
# ys [T, D, B, H]: every step's H in loop order (zeros where masked); mask
# [T, D, B, 1] or None. Every step is a fixed number of numpy calls into buffers
# allocated once, whatever the batch and hidden sizes. Each returns the final
# (h, c); h may be a view of ys.


def _masked_update(s, mask, h, c, hn, cn, ys):
    """Take the new state only where step s is inside the sequence; write H there."""
    m = mask[s]
    np.copyto(h, hn, where=m)
    if c is not None:
        np.copyto(c, cn, where=m)
    np.copyto(ys[s], hn, where=m)


def _rnn_loop(xs, rt, h, ys, mask, f, clip):
    """H_t = f(clip(X_t W^T + H_{t-1} R^T + Wb + Rb))."""
    hn = np.empty_like(h) if mask is not None else None
    for s in range(xs.shape[0]):
        out = ys[s] if mask is None else hn
        np.matmul(h, rt, out=out)
        out += xs[s]
        if clip is not None:
            clip(out)
        f(out)
        if mask is None:
            h = out
        else:
            _masked_update(s, mask, h, None, hn, None, ys)
    return h, None


def _gru_loop(xs, rt, h, ys, mask, f, g, clip, rbh, linear_before_reset):
    """GRU steps with gate order z, r, h: z, r = f(X W^T + H R^T + biases); the new
    gate hh = g(X W_h^T + (r * H) R_h^T + biases), or with linear_before_reset
    g(X W_h^T + Wb_h + r * (H R_h^T + Rb_h)), where xs's h block lacks Rb_h and `rbh`
    [D, 1, H] carries it; H_t = (1 - z) * hh + z * H_{t-1}."""
    hs = h.shape[-1]
    full = np.empty(h.shape[:-1] + (3 * hs,), h.dtype) if linear_before_reset else None
    rt_zr, rt_h = rt[..., :2 * hs], rt[..., 2 * hs:]
    zr = np.empty(h.shape[:-1] + (2 * hs,), h.dtype)
    z, r = zr[..., :hs], zr[..., hs:]
    hh, tmp = np.empty_like(h), np.empty_like(h)
    hn = np.empty_like(h) if mask is not None else None
    for s in range(xs.shape[0]):
        x = xs[s]
        if linear_before_reset:
            np.matmul(h, rt, out=full)
            np.add(full[..., :2 * hs], x[..., :2 * hs], out=zr)
        else:
            np.matmul(h, rt_zr, out=zr)
            zr += x[..., :2 * hs]
        if clip is not None:
            clip(zr)
        f(zr)
        if linear_before_reset:
            np.add(full[..., 2 * hs:], rbh, out=hh)
            hh *= r
        else:
            np.multiply(r, h, out=tmp)
            np.matmul(tmp, rt_h, out=hh)
        hh += x[..., 2 * hs:]
        if clip is not None:
            clip(hh)
        g(hh)
        # (1 - z) * hh + z * h, as hh + z * (h - hh)
        np.subtract(h, hh, out=tmp)
        tmp *= z
        out = ys[s] if mask is None else hn
        np.add(hh, tmp, out=out)
        if mask is None:
            h = out
        else:
            _masked_update(s, mask, h, None, hn, None, ys)
    return h, None


def _lstm_loop(xs, rt, h, c, ys, mask, f, g, act_h, clip, peep, input_forget):
    """LSTM steps with gate order i, o, f, c and peepholes peep = (Pi, Po, Pf) (each
    [D, 1, H]) or None: i = f(Xi + Pi * C), ft = f(Xf + Pf * C) (or 1 - i with
    input_forget), C_t = ft * C + i * g(Xc), o = f(Xo + Po * C_t), H_t = o * act_h(C_t),
    where X* are the gates' X W^T + H R^T + biases, each clipped."""
    hs = h.shape[-1]
    pre = np.empty(h.shape[:-1] + (4 * hs,), h.dtype)
    gi, go, gf, gc = (pre[..., k * hs:(k + 1) * hs] for k in range(4))
    cn, tmp = np.empty_like(c), np.empty_like(c)
    hn = np.empty_like(h) if mask is not None else None
    for s in range(xs.shape[0]):
        np.matmul(h, rt, out=pre)
        pre += xs[s]
        if peep is None:
            if clip is not None:
                clip(pre)
            f(pre[..., :3 * hs])  # i, o and f in one call
            g(gc)
        else:
            np.multiply(peep[0], c, out=tmp)
            gi += tmp
            np.multiply(peep[2], c, out=tmp)
            gf += tmp
            if clip is not None:
                clip(gi)
                clip(gf)
                clip(gc)
            f(gi)
            f(gf)
            g(gc)
        if input_forget:
            np.subtract(1, gi, out=gf)
        np.multiply(gf, c, out=cn)
        gc *= gi
        cn += gc
        if peep is not None:
            np.multiply(peep[1], cn, out=tmp)
            go += tmp
            if clip is not None:
                clip(go)
            f(go)
        act_h(cn, tmp)
        out = ys[s] if mask is None else hn
        np.multiply(go, tmp, out=out)
        if mask is None:
            h = out
            c, cn = cn, c
        else:
            _masked_update(s, mask, h, c, hn, cn, ys)
    return h, c


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
        _check_clip(op_name, attrs)
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
            lens = np.asarray(seq_lens)  # [batch] exactly: no other rank is read as one
            _check(op_name, lens.shape == (batch,),
                   f"sequence_lens shape {lens.shape}, want {(batch,)}")
            lens = lens.astype(np.int64)
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

        # loop order: direction d at loop step s reads time s, or T-1-s when reversed
        reversed_dirs = [attrs["direction"] == "reverse" or d == 1 for d in range(nd)]
        if any(reversed_dirs):
            xs = np.empty((t_len, nd, batch, gh), dt)
            for d, rev in enumerate(reversed_dirs):
                xs[:, d] = xw[::-1, :, d] if rev else xw[:, :, d]
        else:
            xs = xw.transpose(0, 2, 1, 3)
        mask = None
        if valid is not None:
            mask = np.stack([valid[::-1] if rev else valid for rev in reversed_dirs], 1)
        # R^T: a view for one sequence (BLAS reads R transposed, no copy per run); for
        # a batch numpy's stacked matmul takes a transposed view off BLAS (6x slower
        # per step for 2 x 8 x 128 @ 128 x 512), so a copy pays for itself at once
        rt = r.transpose(0, 2, 1)
        if batch > 1:
            rt = np.ascontiguousarray(rt)
        h = np.array(h0, dtype=dt, order="C")  # the loops overwrite their state
        ys = (np.zeros if mask is not None else np.empty)((t_len, nd, batch, hs), dt)
        act = [_for_directions([acts[d][k] for d in range(nd)])
               for k in range(len(acts[0]))]
        # sigmoid's e^-x overflows to inf (giving exactly 0) far below zero and
        # underflows to 0 far above it: both are its exact float results
        with np.errstate(over="ignore", under="ignore"):
            if op_name == "RNN":
                h, c = _rnn_loop(xs, rt, h, ys, mask, act[0], clip)
            elif op_name == "GRU":
                h, c = _gru_loop(xs, rt, h, ys, mask, act[0], act[1], clip,
                                 rb[:, 2 * hs:].reshape(nd, 1, hs), lbr)
            else:
                p = None if peep is None else tuple(
                    peep[:, k * hs:(k + 1) * hs].reshape(nd, 1, hs) for k in range(3))
                h, c = _lstm_loop(xs, rt, h, np.array(c0, dtype=dt, order="C"), ys, mask,
                                  act[0], act[1], act[2], clip, p,
                                  bool(attrs["input_forget"]))
        y_h = h.copy() if np.may_share_memory(h, ys) else h
        y_c = c
        y = ys
        for d, rev in enumerate(reversed_dirs):
            if rev:  # back to time order (numpy buffers the overlapping copy)
                y[:, d] = y[::-1, d]

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
        _check_clip(op_name, attrs)
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
        lens = inputs[4] if len(inputs) > 4 else None
        if lens is not None and lens.shape is not None and len(lens.shape) != 1:
            raise ShapeError(f"{op_name}: sequence_lens must be rank 1 ([batch_size]), "
                             f"got shape {lens.shape}")
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


"""Operators: ONNX's training optimizers (`ai.onnx.preview.training`: Adagrad, Adam,
Momentum), pure functions from the current state to the updated one.

Each op takes the learning rate R and the update count T (scalars), then k tensors X,
their k gradients G and the optimizer's per-tensor state (H for Adagrad; V then H for
Adam; V for Momentum), and returns the k new X followed by the new states in the same
order. The number of inputs decides k. G and the states must broadcast to their X's
shape; every output has the shape and dtype of the tensor it replaces. The stateful,
variable-updating optimizers of the `onegraph` domain live in `ops/training.py`.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .registry import NUM_OUTPUTS, TensorInfo, define

DOMAIN = "ai.onnx.preview.training"

# Per op: how many state tensors accompany each optimised X (besides its gradient).
_STATES = {"Adagrad": 1, "Adam": 2, "Momentum": 1}

_FLOATS = ("float32", "float64")

_LAYOUT = {"Adagrad": "X..., G..., H...", "Adam": "X..., G..., V..., H...",
           "Momentum": "X..., G..., V..."}


def _groups(op: str, count: int) -> int:
    """Number of optimised tensors k for `count` inputs (R, T, then (2 + states) * k).

    Raises:
        OpAttributeError: the variadic inputs do not split into whole groups.
    """
    width = 2 + _STATES[op]
    rest = count - 2
    if rest <= 0 or rest % width:
        raise OpAttributeError(
            f"{op}: expects R, T and then {width} inputs per optimised tensor "
            f"({_LAYOUT[op]}), got {count} inputs in all")
    return rest // width


def _scalars(op: str, r, t) -> tuple[float, int]:
    """The learning rate and update count as Python numbers.

    Raises:
        ShapeError: R or T is missing, not a single value, or of the wrong dtype.
    """
    if r is None or t is None:
        raise ShapeError(f"{op}: the inputs R and T are required")
    r, t = np.asarray(r), np.asarray(t)
    if r.size != 1 or t.size != 1:
        raise ShapeError(f"{op}: R and T must be scalars, got shapes {list(r.shape)} and "
                         f"{list(t.shape)}")
    if r.dtype.kind != "f":
        raise ShapeError(f"{op}: R must be float or double, got {r.dtype}")
    if t.dtype.kind not in "iu":
        raise ShapeError(f"{op}: T must be an int64 count, got {t.dtype}")
    return float(r.reshape(())), int(t.reshape(()))


def _split(op: str, inputs) -> tuple[float, int, list[list[np.ndarray]]]:
    """R, T and the per-kind lists [X..., G..., state...], each checked against its X.

    Raises:
        OpAttributeError: the input count does not split into whole groups.
        ShapeError: a tensor is missing, not float/double, or does not broadcast to X.
    """
    k = _groups(op, len(inputs))
    r, t = _scalars(op, inputs[0], inputs[1])
    kinds = [list(inputs[2 + j * k: 2 + (j + 1) * k]) for j in range(2 + _STATES[op])]
    for i, x in enumerate(kinds[0]):
        for j, kind in enumerate(kinds):
            a = kind[i]
            if a is None:
                raise ShapeError(f"{op}: input {2 + j * k + i} is missing")
            a = np.asarray(a)
            if a.dtype.name not in _FLOATS:
                raise ShapeError(f"{op}: input {2 + j * k + i} must be float or double, "
                                 f"got {a.dtype}")
            if j:
                try:
                    a = np.broadcast_to(a, np.shape(x))
                except ValueError:
                    raise ShapeError(
                        f"{op}: input {2 + j * k + i} of shape {list(a.shape)} does not "
                        f"broadcast to the shape {list(np.shape(x))} of the tensor it "
                        f"belongs to (input {2 + i})") from None
            kind[i] = a
    return r, t, kinds


def _outputs(attrs, values) -> tuple:
    # Honour a node that declares fewer outputs than the full set (trailing ones unused).
    n = attrs.get(NUM_OUTPUTS)
    return tuple(values if n is None else values[:n])


def _adagrad_kernel(inputs, attrs, ctx):
    """One ADAGRAD step for every (X, G, H) group: returns X_new..., H_new....

    Raises:
        OpAttributeError: the input count does not split into (X, G, H) groups.
        ShapeError: R/T are not scalars, or a tensor has a bad dtype or shape.
    """
    r, t, (xs, gs, hs) = _split("Adagrad", inputs)
    rate = r / (1.0 + t * float(attrs["decay_factor"]))
    norm, eps = float(attrs["norm_coefficient"]), float(attrs["epsilon"])
    new_x, new_h = [], []
    for x, g, h in zip(xs, gs, hs):
        g_reg = norm * x + g
        h_new = h + g_reg * g_reg
        new_x.append((x - rate * g_reg / (np.sqrt(h_new) + eps)).astype(x.dtype, copy=False))
        new_h.append(h_new.astype(h.dtype, copy=False))
    return _outputs(attrs, new_x + new_h)


def _adam_kernel(inputs, attrs, ctx):
    """One Adam step for every (X, G, V, H) group: returns X_new..., V_new..., H_new....

    Raises:
        OpAttributeError: the input count does not split into (X, G, V, H) groups.
        ShapeError: R/T are not scalars, or a tensor has a bad dtype or shape.
    """
    r, t, (xs, gs, vs, hs) = _split("Adam", inputs)
    alpha, beta = float(attrs["alpha"]), float(attrs["beta"])
    norm, post = float(attrs["norm_coefficient"]), float(attrs["norm_coefficient_post"])
    eps = float(attrs["epsilon"])
    # Bias correction folded into the step size; at T = 0 it would divide by zero.
    rate = r * np.sqrt(1.0 - beta ** t) / (1.0 - alpha ** t) if t > 0 else r
    new_x, new_v, new_h = [], [], []
    for x, g, v, h in zip(xs, gs, vs, hs):
        g_reg = norm * x + g
        v_new = alpha * v + (1.0 - alpha) * g_reg
        h_new = beta * h + (1.0 - beta) * (g_reg * g_reg)
        x_new = (1.0 - post) * (x - rate * v_new / (np.sqrt(h_new) + eps))
        new_x.append(x_new.astype(x.dtype, copy=False))
        new_v.append(v_new.astype(v.dtype, copy=False))
        new_h.append(h_new.astype(h.dtype, copy=False))
    return _outputs(attrs, new_x + new_v + new_h)


def _momentum_kernel(inputs, attrs, ctx):
    """One SGD-with-momentum step (standard or Nesterov) per (X, G, V): X_new..., V_new....

    Raises:
        OpAttributeError: unknown mode, or the input count does not split into groups.
        ShapeError: R/T are not scalars, or a tensor has a bad dtype or shape.
    """
    mode = attrs["mode"]
    if mode not in ("standard", "nesterov"):
        raise OpAttributeError(f"Momentum: mode must be 'standard' or 'nesterov', got {mode!r}")
    r, t, (xs, gs, vs) = _split("Momentum", inputs)
    alpha, norm = float(attrs["alpha"]), float(attrs["norm_coefficient"])
    # The first step takes the whole gradient; beta scales it only from then on.
    beta = float(attrs["beta"]) if t > 0 else 1.0
    new_x, new_v = [], []
    for x, g, v in zip(xs, gs, vs):
        g_reg = norm * x + g
        v_new = alpha * v + beta * g_reg
        step = v_new if mode == "standard" else g_reg + alpha * v_new
        new_x.append((x - r * step).astype(x.dtype, copy=False))
        new_v.append(v_new.astype(v.dtype, copy=False))
    return _outputs(attrs, new_x + new_v)


def _infer_for(op: str):
    def infer(attrs, inputs):
        """Each output has the dtype and shape of the X or state tensor it updates."""
        k = _groups(op, len(inputs))
        rest = inputs[2:]
        out = [TensorInfo(a.dtype if a is not None else None,
                          a.shape if a is not None else None) for a in rest[:k]]
        # States keep their own dtype but take X's shape (they broadcast to it).
        for j in range(2, 2 + _STATES[op]):
            for i in range(k):
                s, x = rest[j * k + i], rest[i]
                out.append(TensorInfo(s.dtype if s is not None else None,
                                      x.shape if x is not None else None))
        n = attrs.get(NUM_OUTPUTS)
        return out if n is None else out[:n]

    return infer


def _f32(value: float) -> float:
    # ONNX float attributes are float32: a default must be the value a model would hold.
    return float(np.float32(value))


_COMMON = (("norm_coefficient", "float", 0.0),)

OPS = (
    define("Adagrad", ["R", "T", "inputs*"], ["outputs*"], _adagrad_kernel,
           attrs=_COMMON + (("decay_factor", "float", 0.0), ("epsilon", "float", _f32(1e-6))),
           infer=_infer_for("Adagrad"), domain=DOMAIN, dtypes=_FLOATS,
           doc="one ADAGRAD step on several tensors"),
    define("Adam", ["R", "T", "inputs*"], ["outputs*"], _adam_kernel,
           attrs=_COMMON + (("alpha", "float", _f32(0.9)), ("beta", "float", _f32(0.999)),
                            ("epsilon", "float", _f32(1e-6)),
                            ("norm_coefficient_post", "float", 0.0)),
           infer=_infer_for("Adam"), domain=DOMAIN, dtypes=_FLOATS,
           doc="one Adam step on several tensors"),
    define("Momentum", ["R", "T", "inputs*"], ["outputs*"], _momentum_kernel,
           attrs=_COMMON + (("alpha", "float"), ("beta", "float"), ("mode", "string")),
           infer=_infer_for("Momentum"), domain=DOMAIN, dtypes=_FLOATS,
           doc="one SGD-with-momentum (standard or Nesterov) step on several tensors"),
)

KNOWN_FAILURES: dict[str, str] = {}

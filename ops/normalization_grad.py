"""Gradient rules of the normalization family (see `ops/registry.py`, gradient contract).

Every rule is built from ordinary graph ops (so it runs everywhere and can itself be
differentiated). The common core is the backward pass of xhat = (x - mean) / sqrt(var +
eps) over a set of axes holding n elements each:

    dx = inv * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)),  inv = 1/sqrt(var + eps)

BatchNormalization in inference mode is an affine map of x whose coefficients come from
the mean/var inputs, so those get gradients too; in training mode (training_mode=1) the
statistics are the batch's and the running_mean/running_var outputs are differentiated
as momentum blends of the inputs and the batch statistics.
"""

from __future__ import annotations

from ..errors import GradientNotDefinedError
from .grad_util import like_dtype


def _rank(op, x) -> int:
    if x.shape is None:
        raise GradientNotDefinedError(f"{op.type} gradient needs an input of known rank")
    return len(x.shape)


def _mean(b, t, axes):
    return b.op("ReduceMean", [t, b.constant_ints(axes)], {"keepdims": 1})


def _sum(b, t, axes):
    return b.op("ReduceSum", [t, b.constant_ints(axes)], {"keepdims": 0})


def _per_channel(b, p, rank):
    """A (C,) tensor reshaped to broadcast over (N, C, *spatial)."""
    return b.op("Reshape", [p, b.constant_ints([-1] + [1] * (rank - 2))])


def _standardize(b, x, axes, eps):
    """(xhat, inv) of x normalised over axes: inv = 1 / sqrt(var + eps) (keepdims)."""
    d = b.op("Sub", [x, _mean(b, x, axes)])
    var = _mean(b, b.op("Mul", [d, d]), axes)
    inv = b.op("Reciprocal", [b.op("Sqrt", [b.op("Add", [var, like_dtype(b, eps, x)])])])
    return b.op("Mul", [d, inv]), inv


def _standardize_backward(b, dxhat, xhat, inv, axes):
    """dL/dx from dL/dxhat for xhat = standardize(x) over axes."""
    centred = b.op("Sub", [dxhat, _mean(b, dxhat, axes)])
    proj = b.op("Mul", [xhat, _mean(b, b.op("Mul", [dxhat, xhat]), axes)])
    return b.op("Mul", [inv, b.op("Sub", [centred, proj])])


def _batch_norm(b, op, grads):
    g = grads[0]
    x, scale, bias, mean, var = op.inputs[:5]
    rank = _rank(op, x)
    eps = float(op.attrs["epsilon"])
    axes = [0] + list(range(2, rank))
    if int(op.attrs["training_mode"]):
        return _batch_norm_training(b, op, grads, axes, rank, eps)
    if g is None:
        return [None] * 5
    # y = (x - mean) * a + B with a = scale * inv, inv = 1 / sqrt(var + eps) per channel
    inv = b.op("Reciprocal", [b.op("Sqrt", [b.op("Add", [var, like_dtype(b, eps, var)])])])
    a = b.op("Mul", [scale, inv])
    d = b.op("Sub", [x, _per_channel(b, mean, rank)])
    g_sum = _sum(b, g, axes)
    gd_sum = _sum(b, b.op("Mul", [g, d]), axes)
    dx = b.op("Mul", [g, _per_channel(b, a, rank)])
    dscale = b.op("Mul", [gd_sum, inv])
    dmean = b.op("Neg", [b.op("Mul", [g_sum, a])])
    inv3 = b.op("Mul", [inv, b.op("Mul", [inv, inv])])
    dvar = b.op("Mul", [b.op("Mul", [gd_sum, scale]),
                        b.op("Mul", [inv3, like_dtype(b, -0.5, var)])])
    return [dx, dscale, g_sum, dmean, dvar]


def _batch_norm_training(b, op, grads, axes, rank, eps):
    g = grads[0]
    g_rmean = grads[1] if len(grads) > 1 else None
    g_rvar = grads[2] if len(grads) > 2 else None
    x, scale = op.inputs[0], op.inputs[1]
    mom = float(op.attrs["momentum"])
    xhat, inv = _standardize(b, x, axes, eps)
    parts, dscale, dbias = [], None, None
    if g is not None:
        dxhat = b.op("Mul", [g, _per_channel(b, scale, rank)])
        parts.append(_standardize_backward(b, dxhat, xhat, inv, axes))
        dscale = _sum(b, b.op("Mul", [g, xhat]), axes)
        dbias = _sum(b, g, axes)
    d_in_mean = d_in_var = None
    # running_mean = input_mean * mom + batch_mean * (1 - mom); likewise for the variance
    # (the population variance mean((x - batch_mean)^2), whose derivative is 2 d / n)
    mean_grad = dict(axes=axes, keepdims=1, mode="mean")
    if g_rmean is not None:
        d_in_mean = b.op("Mul", [g_rmean, like_dtype(b, mom, g_rmean)])
        share = b.op("Mul", [g_rmean, like_dtype(b, 1.0 - mom, g_rmean)])
        parts.append(b.op("ReduceGrad", [share, x, share], mean_grad))
    if g_rvar is not None:
        d_in_var = b.op("Mul", [g_rvar, like_dtype(b, mom, g_rvar)])
        share = b.op("Mul", [g_rvar, like_dtype(b, 2.0 * (1.0 - mom), g_rvar)])
        d = b.op("Sub", [x, _mean(b, x, axes)])
        parts.append(b.op("Mul", [b.op("ReduceGrad", [share, x, share], mean_grad), d]))
    dx = None if not parts else parts[0] if len(parts) == 1 else b.op("AddN", parts)
    return [dx, dscale, dbias, d_in_mean, d_in_var]


def _instance_norm(b, op, grads):
    (g,) = grads
    x, scale, _ = op.inputs
    rank = _rank(op, x)
    xhat, inv = _standardize(b, x, list(range(2, rank)), float(op.attrs["epsilon"]))
    dxhat = b.op("Mul", [g, _per_channel(b, scale, rank)])
    dx = _standardize_backward(b, dxhat, xhat, inv, list(range(2, rank)))
    outer = [0] + list(range(2, rank))
    return [dx, _sum(b, b.op("Mul", [g, xhat]), outer), _sum(b, g, outer)]


def _group_norm(b, op, grads):
    """GroupNormalization with per-channel (C,) scale and bias, or per-group (G,) ones
    (opsets 18-20, spread over each group's C/G channels by the kernel): the per-group
    gradients are the per-channel ones summed within each group.

    Raises:
        GradientNotDefinedError: x has unknown rank.
    """
    (g,) = grads
    x, scale, bias = op.inputs
    rank = _rank(op, x)
    groups = int(op.attrs["num_groups"])
    # normalise (N, G, C/G * spatial) over its last axis, as the kernel does
    xg = b.op("Reshape", [x, b.constant_ints([0, groups, -1])])
    xhat_g, inv = _standardize(b, xg, [2], float(op.attrs["epsilon"]))
    x_shape = b.op("Shape", [x])
    xhat = b.op("Reshape", [xhat_g, x_shape])
    outer = [0] + list(range(2, rank))
    dbias = _sum(b, g, outer)  # (C,): also gives the channel count for per-group values
    per_channel = _is_per_channel(scale, x)
    scale_c = scale if per_channel else _spread_groups(b, scale, groups, dbias)
    dxhat = b.op("Mul", [g, _per_channel(b, scale_c, rank)])
    dxhat_g = b.op("Reshape", [dxhat, b.constant_ints([0, groups, -1])])
    dx = b.op("Reshape", [_standardize_backward(b, dxhat_g, xhat_g, inv, [2]), x_shape])
    dscale = _sum(b, b.op("Mul", [g, xhat]), outer)
    if not per_channel:
        dscale = _sum_groups(b, dscale, groups, scale)
    if not _is_per_channel(bias, x):
        dbias = _sum_groups(b, dbias, groups, bias)
    return [dx, dscale, dbias]


def _is_per_channel(v, x) -> bool:
    """True when v is known while building to hold one value per channel of x."""
    return (v.shape is not None and x.shape is not None and len(x.shape) > 1
            and len(v.shape) == 1 and v.shape[0] is not None and v.shape[0] == x.shape[1])


def _spread_groups(b, v, groups, like_c):
    """GroupNormalization's scale or bias, (C,) per channel or (G,) per group, as (C,)
    per-channel values (like_c: any (C,) tensor). Seen as (G, C/G) or (G, 1), it is
    broadcast to (G, C/G), so both forms work when the shapes are known only at run
    time."""
    v_g = b.op("Reshape", [v, b.constant_ints([groups, -1])])
    c_g = b.op("Shape", [b.op("Reshape", [like_c, b.constant_ints([groups, -1])])])
    return b.op("Reshape", [b.op("Expand", [v_g, c_g]), b.constant_ints([-1])])


def _sum_groups(b, d_c, groups, v):
    """Per-channel gradients d_c (C,) summed back to v's form: unchanged for a (C,) v,
    summed within each group for a (G,) v."""
    d_g = b.op("Reshape", [d_c, b.constant_ints([groups, -1])])
    v_g = b.op("Reshape", [v, b.constant_ints([groups, -1])])
    return b.op("Reshape", [b.op("SumToShapeOf", [d_g, v_g]), b.op("Shape", [v])])


def _layer_norm(b, op, grads):
    g = grads[0]
    if any(gr is not None for gr in grads[1:]):
        raise GradientNotDefinedError("LayerNormalization: the Mean and InvStdDev outputs "
                                      "have no gradient; use og.stop_gradient on them")
    ins = op.inputs
    x, scale = ins[0], ins[1]
    bias = ins[2] if len(ins) > 2 else None
    if g is None:
        return [None] * len(ins)
    rank = _rank(op, x)
    axis = int(op.attrs["axis"])
    axes = list(range(axis % rank, rank))
    xhat, inv = _standardize(b, x, axes, float(op.attrs["epsilon"]))
    dx = _standardize_backward(b, b.op("Mul", [g, scale]), xhat, inv, axes)
    out = [dx, b.op("SumToShapeOf", [b.op("Mul", [g, xhat]), scale])]
    if len(ins) > 2:
        out.append(None if bias is None else b.op("SumToShapeOf", [g, bias]))
    return out


def _mean_variance_norm(b, op, grads):
    """y = d / (s + 1e-9), d = x - mean(x), s = sqrt(mean(d^2)) over axes: with r = 1 /
    (s + 1e-9), dL/dd = g r - r^2 mean(g d) d / s, then dL/dx = dL/dd - mean(dL/dd)."""
    (g,) = grads
    x = op.inputs[0]
    rank = _rank(op, x)
    axes = sorted(int(a) % rank for a in op.attrs["axes"])
    d = b.op("Sub", [x, _mean(b, x, axes)])
    s = b.op("Sqrt", [_mean(b, b.op("Mul", [d, d]), axes)])
    r = b.op("Reciprocal", [b.op("Add", [s, like_dtype(b, 1e-9, x)])])
    coef = b.op("Div", [b.op("Mul", [b.op("Mul", [r, r]), _mean(b, b.op("Mul", [g, d]), axes)]),
                        s])
    dd = b.op("Sub", [b.op("Mul", [g, r]), b.op("Mul", [coef, d])])
    return [b.op("Sub", [dd, _mean(b, dd, axes)])]


def _lp_norm(b, op, grads):
    """y = x / |x|_p along axis (p = 1 or 2): dx = (g - u * sum(g * y)) / |x|_p with
    u = y for p = 2 and u = sign(x) for p = 1."""
    (g,) = grads
    x, y = op.inputs[0], op.outputs[0]
    p = int(op.attrs["p"])
    if p not in (1, 2):
        raise GradientNotDefinedError(f"LpNormalization gradient: p must be 1 or 2, got {p}")
    ax = b.constant_ints([int(op.attrs["axis"])])
    norm = b.op("ReduceL2" if p == 2 else "ReduceL1", [x, ax], {"keepdims": 1})
    gy = b.op("ReduceSum", [b.op("Mul", [g, y]), ax], {"keepdims": 1})
    u = y if p == 2 else b.op("Sign", [x])
    return [b.op("Div", [b.op("Sub", [g, b.op("Mul", [u, gy])]), norm])]


GRADIENTS = {
    "BatchNormalization": _batch_norm, "GroupNormalization": _group_norm,
    "InstanceNormalization": _instance_norm, "LayerNormalization": _layer_norm,
    "LpNormalization": _lp_norm, "MeanVarianceNormalization": _mean_variance_norm,
}

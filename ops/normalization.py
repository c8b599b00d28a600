"""Operators: normalization family.

BatchNormalization (inference and training mode), InstanceNormalization,
LayerNormalization, GroupNormalization, MeanVarianceNormalization, LpNormalization.
Statistics are computed in float32 (float64 stays float64); inference-mode batch norm
folds into one per-channel multiply-add.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .registry import TensorInfo, define


def _cdt(dtype):
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


def _stash_dtype(stash_type, x_dtype):
    """ONNX stash_type (a TensorProto dtype code) -> numpy compute dtype."""
    if stash_type == 11:
        return np.dtype(np.float64)
    if stash_type == 10:
        return np.dtype(np.float16)
    return _cdt(x_dtype) if stash_type in (1, None) else np.dtype(np.float32)


def _stat_dtype(stash_type):
    """dtype of LayerNormalization's Mean and InvStdDev outputs: the stash type itself
    (float32 by default, whatever X is), even where the kernel computes wider."""
    return np.dtype({11: np.float64, 10: np.float16}.get(stash_type, np.float32))


def _per_channel(v, ndim, dtype):
    """A (C,) parameter reshaped to broadcast over (N, C, *spatial)."""
    return np.asarray(v, dtype=dtype).reshape((-1,) + (1,) * (ndim - 2))


def _mean_var(x, axes):
    """Population mean and variance over axes (keepdims), one pass for the mean. Over
    no elements both are NaN, as numpy's mean gives, without its RuntimeWarning."""
    if any(x.shape[a] == 0 for a in axes):
        shape = tuple(1 if a in axes else n for a, n in enumerate(x.shape))
        return np.full(shape, np.nan, x.dtype), np.full(shape, np.nan, x.dtype)
    mean = x.mean(axis=axes, keepdims=True)
    d = x - mean
    var = np.mean(np.square(d, out=d), axis=axes, keepdims=True)
    return mean, var


# --------------------------------------------------------------------------------------
# BatchNormalization
# --------------------------------------------------------------------------------------


_BATCHNORM_PARAMS = ("scale", "B", "input_mean", "input_var")


def _batchnorm_kernel(inputs, attrs, ctx):
    x, scale, bias, mean, var = inputs[:5]
    if any(np.shape(p) != (x.shape[1:2] or (1,)) for p in inputs[1:5]):
        _check_per_channel("BatchNormalization", x.shape,
                           [(n, np.shape(p)) for n, p in zip(_BATCHNORM_PARAMS, inputs[1:5])],
                           rank1_has_one_channel=True)
    eps = float(attrs["epsilon"])
    cdt = _cdt(x.dtype)
    xc = np.asarray(x, dtype=cdt)
    if int(attrs.get("training_mode", 0)):
        axes = (0,) + tuple(range(2, x.ndim))
        cur_mean, cur_var = _mean_var(xc, axes)
        mom = float(attrs["momentum"])
        cm, cv = cur_mean.reshape(-1), cur_var.reshape(-1)
        run_mean = (np.asarray(mean, cdt) * mom + cm * (1 - mom)).astype(mean.dtype)
        run_var = (np.asarray(var, cdt) * mom + cv * (1 - mom)).astype(var.dtype)
        a = np.asarray(scale, cdt) / np.sqrt(cv + cdt.type(eps))
        b = np.asarray(bias, cdt) - cm * a
        y = xc * _per_channel(a, x.ndim, cdt)
        y += _per_channel(b, x.ndim, cdt)
        return (y.astype(x.dtype, copy=False), run_mean, run_var)
    a = np.asarray(scale, cdt) / np.sqrt(np.asarray(var, cdt) + cdt.type(eps))
    b = np.asarray(bias, cdt) - np.asarray(mean, cdt) * a
    y = xc * _per_channel(a, x.ndim, cdt)
    y += _per_channel(b, x.ndim, cdt)
    return (y.astype(x.dtype, copy=False),)


def _batchnorm_infer(attrs, inputs):
    x = inputs[0]
    _check_per_channel("BatchNormalization", x.shape,
                       [(n, None if p is None else p.shape)
                        for n, p in zip(_BATCHNORM_PARAMS, inputs[1:5])],
                       rank1_has_one_channel=True)
    out = [TensorInfo(x.dtype, x.shape)]
    if int(attrs.get("training_mode", 0)):
        for t in inputs[3:5]:
            out.append(TensorInfo(t.dtype if t is not None else x.dtype,
                                  t.shape if t is not None else None))
    return out


# --------------------------------------------------------------------------------------
# InstanceNormalization, GroupNormalization
# --------------------------------------------------------------------------------------


def _check_per_channel(op: str, x_shape, params, rank1_has_one_channel=False) -> None:
    """An op's per-channel parameters (InstanceNormalization's scale and B,
    BatchNormalization's scale, B, mean and var) hold one value per channel of X
    (N, C, ...). `params` is [(name, shape)]; shapes may hold None for unknown dims,
    and a None shape is unknown.

    Raises:
        ShapeError: X has rank below 2 (no channel dim), or a parameter is not 1-D of C
            (one value for every channel would be broadcast silently).
    """
    if x_shape is None:
        return
    if len(x_shape) == 1 and rank1_has_one_channel:
        c = 1   # BatchNormalization: "single dimension input of size N ... C is assumed 1"
    elif len(x_shape) < 2:
        raise ShapeError(f"{op}: input of rank {len(x_shape)}; it needs at least 2 "
                         f"(N, C, ...)")
    else:
        c = x_shape[1]
    for name, shape in params:
        if shape is not None and (len(shape) != 1 or None not in (c, shape[0])
                                  and shape[0] != c):
            raise ShapeError(f"{op}: {name} has shape {list(shape)}; it needs one value "
                             f"per channel, shape [{c}]")


def _instancenorm_kernel(inputs, attrs, ctx):
    x, scale, bias = inputs
    cdt = _cdt(x.dtype)
    if x.ndim < 2 or np.shape(scale) != x.shape[1:2] or np.shape(bias) != x.shape[1:2]:
        _check_per_channel("InstanceNormalization", x.shape,
                           [("scale", np.shape(scale)), ("B", np.shape(bias))])
    n, c = x.shape[:2]
    xc = np.asarray(x, dtype=cdt).reshape(n, c, int(np.prod(x.shape[2:])))
    mean, var = _mean_var(xc, (2,))
    a = np.asarray(scale, cdt).reshape(1, c, 1) / np.sqrt(var + cdt.type(attrs["epsilon"]))
    # (x - mean) a + B, not x a + (B - mean a): that cancels to |mean / std| ulps of
    # error where the values sit far from 0 with a small spread
    y = xc - mean
    y *= a
    y += np.asarray(bias, cdt).reshape(1, c, 1)
    return (y.reshape(x.shape).astype(x.dtype, copy=False),)


def _groupnorm_kernel(inputs, attrs, ctx):
    x, scale, bias = inputs
    g = int(attrs["num_groups"])
    n, c = x.shape[:2]
    if g < 1:
        raise OpAttributeError(f"GroupNormalization: num_groups must be positive, got {g}")
    if c % g:
        raise ShapeError(f"GroupNormalization: {c} channels not divisible by {g} groups")
    sdt = _stash_dtype(int(attrs.get("stash_type", 1)), x.dtype)
    xg = np.asarray(x, dtype=sdt).reshape(n, g, int(np.prod(x.shape[1:])) // g)
    mean, var = _mean_var(xg, (2,))
    norm = (xg - mean) / np.sqrt(var + sdt.type(attrs["epsilon"]))
    norm = norm.astype(x.dtype, copy=False).reshape(x.shape)
    cdt = _cdt(x.dtype)
    y = norm * _per_channel(_channel_values(scale, "scale", c, g, cdt), x.ndim, cdt)
    y += _per_channel(_channel_values(bias, "bias", c, g, cdt), x.ndim, cdt)
    return (y.astype(x.dtype, copy=False),)


def _channel_values(v, name, c, g, dtype):
    """GroupNormalization's scale or bias as C per-channel values. Opsets 18-20 gave
    one value per group (opset 21 made them per channel): a (G,) vector with G != C
    can only mean that, and each group's value spreads over its C/G channels."""
    v = np.asarray(v, dtype=dtype).reshape(-1)
    if v.size == c:
        return v
    if v.size == g:
        return np.repeat(v, c // g)
    raise ShapeError(f"GroupNormalization: {name} has {v.size} values; want {c} (one per "
                     f"channel) or {g} (one per group, opsets 18-20)")


# --------------------------------------------------------------------------------------
# LayerNormalization
# --------------------------------------------------------------------------------------


def _layernorm_axis(attrs, rank):
    """LayerNormalization's axis in [0, rank).

    Raises:
        OpAttributeError: outside [-rank, rank) (it would normalise nothing, or each
            element alone).
    """
    axis = int(attrs["axis"])
    if not -rank <= axis < rank:
        raise OpAttributeError(f"LayerNormalization: axis {axis} out of range for rank "
                               f"{rank}")
    return axis + rank if axis < 0 else axis


def _layernorm_kernel(inputs, attrs, ctx):
    x, scale = inputs[0], inputs[1]
    bias = inputs[2] if len(inputs) > 2 else None
    axis = _layernorm_axis(attrs, x.ndim)
    sdt = _stash_dtype(int(attrs.get("stash_type", 1)), x.dtype)
    lead = x.shape[:axis]
    xs = np.asarray(x, dtype=sdt).reshape(int(np.prod(lead)), int(np.prod(x.shape[axis:])))
    if xs.shape[1] == 0:  # nothing to normalise over: NaN statistics, as the reference
        mean = np.full((xs.shape[0], 1), np.nan, sdt)
        inv = mean.copy()
        d = xs.copy()
    else:
        mean = xs.mean(axis=1, keepdims=True)
        d = xs - mean
        var = np.einsum("ij,ij->i", d, d).reshape(-1, 1) / sdt.type(d.shape[1])
        inv = 1.0 / np.sqrt(var + sdt.type(attrs["epsilon"]))
    d *= inv
    for what, t in (("Scale", scale), ("B", bias)):
        shape = np.shape(t)
        if t is not None and (len(shape) > x.ndim or any(
                s not in (1, n) for s, n in zip(shape[::-1], x.shape[::-1]))):
            raise ShapeError(f"LayerNormalization: {what} of shape {list(shape)} does not "
                             f"broadcast to X's {list(x.shape)}")
    y = d.reshape(x.shape).astype(x.dtype, copy=False)
    y = y * scale
    if bias is not None:
        y += bias
    stat_shape = lead + (1,) * (x.ndim - axis)
    stat = _stat_dtype(int(attrs.get("stash_type", 1)))
    return (y.astype(x.dtype, copy=False), mean.reshape(stat_shape).astype(stat, copy=False),
            inv.reshape(stat_shape).astype(stat, copy=False))


def _layernorm_infer(attrs, inputs):
    x = inputs[0]
    sdt = _stat_dtype(int(attrs.get("stash_type", 1)))
    if x.shape is None:
        stat = None
    else:
        axis = _layernorm_axis(attrs, len(x.shape))
        stat = tuple(x.shape[:axis]) + (1,) * (len(x.shape) - axis)
    return [TensorInfo(x.dtype, x.shape), TensorInfo(sdt, stat), TensorInfo(sdt, stat)]


# --------------------------------------------------------------------------------------
# MeanVarianceNormalization, LpNormalization
# --------------------------------------------------------------------------------------


def _mvn_axes(attrs, rank):
    """MeanVarianceNormalization's `axes` mapped into [0, rank).

    Raises:
        OpAttributeError: an axis is outside [-rank, rank) (axes=[-5] on rank 4 is not
            axis 3, nor is the default [0, 2, 3] valid on rank 3), or one axis is named
            twice (3 and -1 on rank 4 too). onnxruntime refuses out-of-range axes and
            the reference raises numpy's AxisError.
    """
    given = [int(a) for a in attrs["axes"]]
    bad = [a for a in given if not -rank <= a < rank]
    if bad:
        raise OpAttributeError(
            f"MeanVarianceNormalization: axes {given} has {bad} out of range for an input "
            f"of rank {rank} (each must be in [{-rank}, {rank - 1}])")
    axes = [a + rank if a < 0 else a for a in given]
    if len(set(axes)) != len(axes):
        raise OpAttributeError(
            f"MeanVarianceNormalization: axes {given} names an axis more than once "
            f"(rank {rank})")
    return tuple(axes)


def _mvn_kernel(inputs, attrs, ctx):
    x = inputs[0]
    cdt = _cdt(x.dtype)
    axes = _mvn_axes(attrs, x.ndim)
    xc = np.asarray(x, dtype=cdt)
    mean, var = _mean_var(xc, axes)
    y = (xc - mean) / (np.sqrt(var) + cdt.type(1e-9))
    return (y.astype(x.dtype, copy=False),)


def _lpnorm_kernel(inputs, attrs, ctx):
    x = inputs[0]
    cdt = _cdt(x.dtype)
    xc = np.asarray(x, dtype=cdt)
    axis = int(attrs["axis"])
    if not -x.ndim <= axis < x.ndim:
        raise OpAttributeError(f"LpNormalization: axis {axis} is out of range for rank "
                               f"{x.ndim}")
    p = int(attrs["p"])
    if p == 1:
        norm = np.abs(xc).sum(axis=axis, keepdims=True)
    elif p == 2:
        norm = np.sqrt(np.square(xc).sum(axis=axis, keepdims=True))
    else:
        raise ShapeError(f"LpNormalization: p must be 1 or 2, got {p}")
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.where(norm == 0, 0, xc / norm)
    return (y.astype(x.dtype, copy=False),)


def _same(attrs, inputs):
    return [TensorInfo(inputs[0].dtype, inputs[0].shape)]


def _mvn_infer(attrs, inputs):
    if inputs[0].shape is not None:
        _mvn_axes(attrs, len(inputs[0].shape))
    return _same(attrs, inputs)


def _instancenorm_infer(attrs, inputs):
    x, scale, bias = inputs
    _check_per_channel("InstanceNormalization", x.shape,
                       [("scale", None if scale is None else scale.shape),
                        ("B", None if bias is None else bias.shape)])
    return [TensorInfo(x.dtype, x.shape)]


_FLOATS = ("float16", "float32", "float64")

BatchNormalization = define(
    "BatchNormalization", ("X", "scale", "B", "input_mean", "input_var"),
    ("Y", "running_mean?", "running_var?"), _batchnorm_kernel,
    (("epsilon", "float", 1e-5), ("momentum", "float", 0.9), ("training_mode", "int", 0)),
    infer=_batchnorm_infer, dtypes=_FLOATS, since_version=15,
    doc="Batch norm; inference folds to x * a + b, training_mode also updates running "
        "statistics.")

GroupNormalization = define(
    "GroupNormalization", ("X", "scale", "bias"), ("Y",), _groupnorm_kernel,
    (("epsilon", "float", 1e-5), ("num_groups", "int"), ("stash_type", "int", 1)),
    infer=_same, dtypes=_FLOATS, since_version=21,
    doc="Normalise per instance per group of channels; per-channel scale and bias "
        "(per-group ones, as opsets 18-20 had them, are spread over their channels).")

InstanceNormalization = define(
    "InstanceNormalization", ("input", "scale", "B"), ("output",), _instancenorm_kernel,
    (("epsilon", "float", 1e-5),), infer=_instancenorm_infer, dtypes=_FLOATS,
    since_version=22,
    doc="Normalise each (instance, channel) over its spatial dims.")

LayerNormalization = define(
    "LayerNormalization", ("X", "Scale", "B?"), ("Y", "Mean?", "InvStdDev?"),
    _layernorm_kernel,
    (("axis", "int", -1), ("epsilon", "float", 1e-5), ("stash_type", "int", 1)),
    infer=_layernorm_infer, dtypes=_FLOATS, since_version=17,
    doc="Normalise over dims [axis, rank); optional Mean/InvStdDev outputs.")

LpNormalization = define(
    "LpNormalization", ("input",), ("output",), _lpnorm_kernel,
    (("axis", "int", -1), ("p", "int", 2)), infer=_same, dtypes=_FLOATS, since_version=22,
    doc="Divide by the L1 or L2 norm along an axis.")

MeanVarianceNormalization = define(
    "MeanVarianceNormalization", ("X",), ("Y",), _mvn_kernel,
    (("axes", "ints", [0, 2, 3]),), infer=_mvn_infer, dtypes=_FLOATS, since_version=13,
    doc="(X - mean) / (std + 1e-9) over the given axes.")

OPS = (BatchNormalization, GroupNormalization, InstanceNormalization, LayerNormalization,
       LpNormalization, MeanVarianceNormalization)

KNOWN_FAILURES: dict[str, str] = {}

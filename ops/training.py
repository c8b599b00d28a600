"""Operators: training helpers of the `onegraph` domain.

What ONNX lacks for training: gradient kernels (ReluGrad, SoftmaxGrad, ConvGradInput,
ConvGradFilter, MaxPoolGrad, AveragePoolGrad, ReduceGrad, SumToShapeOf), AddN,
ZerosLike/OnesLike, the fused softmax cross-entropy losses, dense conversion of sparse
(indices, values) gradients, and the optimizer update kernels (ApplyGradientDescent,
ApplyMomentum, ApplyAdagrad, ApplyRMSProp, ApplyCenteredRMSProp, ApplyAdadelta,
ApplyAdam (og.train.Adam's form), ApplyAdamTF1 (TF1's AdamOptimizer), and
SparseApplyGradientDescent, SparseApplyMomentum, SparseApplyAdagrad, SparseApplyRMSProp,
SparseApplyCenteredRMSProp, SparseApplyAdadelta for the rows a sparse gradient touches).

Update kernels take `VariableRef`s (the variable and its slot variables), compute the
new values from the current ones under the variable's lock and replace them, so two
threads applying updates to one variable serialise instead of losing an update.
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, ShapeError
from .conv import (_col2im, _compute_dtype, _convtranspose_geometry, _im2col, _pad,
                   _pool_geometry, _window_slices, conv_nd)
from .pool import _pooled_shape
from .registry import TensorInfo, VariableRef, define

DOMAIN = "onegraph"


def _f(x):
    return np.asarray(x)


# --------------------------------------------------------------------------- sums, likes

def _add_n(inputs, attrs, ctx):
    """Sum of all inputs (same shape; the first input's dtype)."""
    acc = np.array(inputs[0], copy=True)
    for v in inputs[1:]:
        acc += v
    return (acc,)


def sum_to_shape(g, shape):
    """Sum `g` over the axes numpy broadcasting added or stretched to reach its shape."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and g.shape[lead + i] != 1)
    out = np.sum(g, axis=axes, keepdims=True) if axes else g
    return out.reshape(shape)


def _sum_to_shape_of(inputs, attrs, ctx):
    """Input 0 summed down to the shape of input 1 (undoing broadcasting)."""
    like = inputs[1]
    return (np.asarray(sum_to_shape(_f(inputs[0]), np.shape(like))),)


def _zeros_like(inputs, attrs, ctx):
    x = _f(inputs[0])
    return (np.zeros(x.shape, x.dtype),)


def _ones_like(inputs, attrs, ctx):
    x = _f(inputs[0])
    return (np.ones(x.shape, x.dtype),)


def _broadcast_like(inputs, attrs, ctx):
    """Input 0 broadcast to the shape of input 1 (a contiguous copy)."""
    # np.array, not np.ascontiguousarray: the latter turns a 0-d result into shape (1,)
    return (np.array(np.broadcast_to(inputs[0], np.shape(inputs[1]))),)


# --------------------------------------------------------------------------- reductions

def _reduce_axes(attrs, axes_input, rank):
    axes = None
    if axes_input is not None:
        axes = [int(a) for a in np.asarray(axes_input).reshape(-1)]
    elif attrs["axes"] is not None:
        axes = list(attrs["axes"])
    if not axes:
        return () if attrs["noop_with_empty_axes"] else tuple(range(rank))
    return tuple(sorted({a % rank if rank else 0 for a in axes}))


def _reduce_grad(inputs, attrs, ctx):
    """d(Reduce{Sum,Mean,Max,Min}(x))/dx applied to dy: dy broadcast back over the axes.

    Inputs: dy, x, y (the forward output, used by max/min), axes (optional).
    Max/min share the gradient equally among tied extrema.
    """
    dy, x, y = _f(inputs[0]), _f(inputs[1]), inputs[2]
    axes = _reduce_axes(attrs, inputs[3] if len(inputs) > 3 else None, x.ndim)
    kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    dyk = dy.reshape(kept)
    mode = attrs["mode"]
    if mode == "sum":
        dx = np.broadcast_to(dyk, x.shape)
    elif mode == "mean":
        count = int(np.prod([x.shape[a] for a in axes])) if axes else 1
        dx = np.broadcast_to(dyk / dy.dtype.type(max(count, 1)), x.shape)
    elif mode in ("max", "min"):
        hit = x == np.asarray(y).reshape(kept)
        n = np.sum(hit, axis=axes, keepdims=True) if axes else np.ones(kept)
        dx = hit * (dyk / n)
    elif mode == "sum_square":
        dx = 2 * x * dyk
    elif mode == "l1":
        dx = np.sign(x) * dyk
    elif mode == "l2":
        yk = np.asarray(y).reshape(kept)
        dx = np.where(yk > 0, x / np.where(yk > 0, yk, 1), 0) * dyk
    elif mode == "logsumexp":
        # softmax over the axes, from x itself: exp(x - y) with y = logsumexp(x)
        # already rounded is off by y's rounding error, times |y| (5e-4 at |x| ~ 1e4
        # in float32)
        if x.size == 0:
            dx = np.zeros(x.shape, x.dtype)
        else:
            e = np.exp(x - np.max(x, axis=axes, keepdims=True)) if axes else np.ones_like(x)
            dx = e / (np.sum(e, axis=axes, keepdims=True) if axes else e) * dyk
    elif mode == "log_sum":
        dx = np.broadcast_to(dyk / np.asarray(np.exp(y)).reshape(kept), x.shape)
    elif mode == "prod":
        # d(prod)/dx_i = prod of the others (exact also where x_i == 0)
        dx = _prod_others(x, axes) * dyk
    else:
        raise ExecutionError(f"ReduceGrad: unknown mode {mode!r}")
    # np.array, not np.ascontiguousarray: the latter turns a 0-d result into shape (1,)
    return (np.array(dx, dtype=x.dtype),)


def _prod_others(x, axes):
    """For each element, the product of the other elements of its reduction group."""
    if not axes:
        return np.ones_like(x)
    moved = np.moveaxis(x, axes, tuple(range(x.ndim - len(axes), x.ndim)))
    lead = moved.shape[:x.ndim - len(axes)]
    flat = moved.reshape(lead + (-1,))
    ones = np.ones(lead + (1,), x.dtype)
    before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    after = np.flip(np.cumprod(np.concatenate([ones, np.flip(flat, -1)[..., :-1]], axis=-1),
                               axis=-1), -1)
    others = (before * after).reshape(moved.shape)
    return np.moveaxis(others, tuple(range(x.ndim - len(axes), x.ndim)), axes)


def _slice_grad(inputs, attrs, ctx):
    """Gradient of ONNX Slice: zeros shaped like x with dy written where x was sliced."""
    from .indexing import _slice_spec

    dy, x = _f(inputs[0]), inputs[1]
    starts, ends = (_ints_of(inputs[2]), _ints_of(inputs[3]))
    axes = _ints_of(inputs[4]) if len(inputs) > 4 and inputs[4] is not None else None
    steps = _ints_of(inputs[5]) if len(inputs) > 5 and inputs[5] is not None else None
    out = np.zeros(np.shape(x), dy.dtype)
    out[tuple(_slice_spec(out.shape, starts, ends, axes, steps))] = dy
    return (out,)


def _ints_of(v):
    return [int(a) for a in np.asarray(v).reshape(-1)]


# --------------------------------------------------------------------------- activations

def _relu_grad(inputs, attrs, ctx):
    """dy where the forward output y > 0, else 0."""
    dy, y = _f(inputs[0]), _f(inputs[1])
    # dy * (y > 0), as TensorFlow's ReluGrad: a multiply by the mask is several times
    # faster than np.where (a NaN/inf dy where y <= 0 stays NaN, as in TensorFlow)
    return (np.multiply(dy, y > 0),)


def _sigmoid_grad(inputs, attrs, ctx):
    """dy * y * (1 - y) from the forward output y."""
    dy, y = _f(inputs[0]), _f(inputs[1])
    return (dy * y * (1 - y),)


def _tanh_grad(inputs, attrs, ctx):
    """dy * (1 - y^2) from the forward output y."""
    dy, y = _f(inputs[0]), _f(inputs[1])
    return (dy * (1 - y * y),)


def _softmax_grad(inputs, attrs, ctx):
    """y * (dy - sum(dy * y, axis)) from the forward output y."""
    dy, y = _f(inputs[0]), _f(inputs[1])
    axis = attrs["axis"]
    return (y * (dy - np.sum(dy * y, axis=axis, keepdims=True)),)


def _log_softmax_grad(inputs, attrs, ctx):
    """dy - exp(y) * sum(dy, axis) from the forward output y = log_softmax(x)."""
    dy, y = _f(inputs[0]), _f(inputs[1])
    axis = attrs["axis"]
    return (dy - np.exp(y) * np.sum(dy, axis=axis, keepdims=True),)


# --------------------------------------------------------------------------- losses

def _log_softmax(x):
    m = np.max(x, axis=-1, keepdims=True)
    z = x - m
    return z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))


def _softmax_xent(inputs, attrs, ctx):
    """(loss[..], backprop[.., C]) of softmax cross-entropy with dense label rows."""
    logits, labels = _f(inputs[0]), _f(inputs[1]).astype(inputs[0].dtype, copy=False)
    logp = _log_softmax(logits)
    loss = -np.sum(labels * logp, axis=-1)
    backprop = np.exp(logp) * np.sum(labels, axis=-1, keepdims=True) - labels
    return (loss, backprop)


def _sparse_softmax_xent(inputs, attrs, ctx):
    """(loss[N], backprop[N, C]) of softmax cross-entropy with integer class labels."""
    logits, labels = _f(inputs[0]), _f(inputs[1]).astype(np.int64, copy=False)
    if labels.shape != logits.shape[:-1]:
        raise ShapeError(f"SparseSoftmaxCrossEntropyWithLogits: labels {labels.shape} must "
                         f"be logits {logits.shape} without the class axis")
    c = logits.shape[-1]
    if labels.size and (labels.min() < 0 or labels.max() >= c):
        raise ShapeError(f"SparseSoftmaxCrossEntropyWithLogits: label out of range [0, {c})")
    logp = _log_softmax(logits)
    flat = logp.reshape(-1, c)
    rows = np.arange(flat.shape[0])
    lab = labels.reshape(-1)
    loss = -flat[rows, lab].reshape(labels.shape)
    backprop = np.exp(flat)
    backprop[rows, lab] -= 1
    return (loss, backprop.reshape(logits.shape))


def _infer_xent(attrs, inputs):
    x = inputs[0]
    shape = None if x.shape is None else tuple(x.shape[:-1])
    return [TensorInfo(x.dtype, shape), TensorInfo(x.dtype, x.shape)]


# --------------------------------------------------------------------------- sparse

def _indexed_slices_to_dense(inputs, attrs, ctx):
    """Zeros shaped like input 2 with rows `indices` (input 1) += `values` (input 0)."""
    values, indices, like = _f(inputs[0]), _f(inputs[1]).astype(np.int64), inputs[2]
    shape = np.shape(like)
    out = np.zeros(shape, dtype=values.dtype)
    # (the row count spelled out: -1 cannot be inferred from rows of 0 elements)
    np.add.at(out, indices.reshape(-1), values.reshape((indices.size,) + tuple(shape[1:])))
    return (out,)


# --------------------------------------------------------------------------- conv, pool

def _conv_geometry(x_shape, w_shape, attrs):
    kernel = list(w_shape[2:])
    strides, dil, pb, pe, out_sp = _pool_geometry(tuple(x_shape[2:]), kernel, attrs)
    return kernel, strides, dil, pb, pe, out_sp


def _conv_grad_input(inputs, attrs, ctx):
    """dL/dX of ONNX Conv: inputs dy (N, M, *O), W (M, C/g, *k), x (for its shape)."""
    dy, w, x_shape = _f(inputs[0]), _f(inputs[1]), tuple(np.shape(inputs[2]))
    group = int(attrs["group"] or 1)
    kernel, strides, dil, pb, pe, out_sp = _conv_geometry(x_shape, w.shape, attrs)
    if group == 1 and len(kernel) == 2:
        return (_conv_grad_input_2d(dy, w, x_shape, kernel, strides, dil, pb, out_sp),)
    n, c = x_shape[:2]
    m = w.shape[0]
    cg, mg = c // group, m // group
    kk = cg * int(np.prod(kernel))
    npix = int(np.prod(out_sp))
    dy_g = dy.reshape(n, group, mg, npix)
    w_g = w.reshape(group, mg, kk)
    cols = np.matmul(np.swapaxes(w_g, 1, 2), dy_g)  # (N, G, Kg, P)
    cols = cols.reshape((n, c) + tuple(kernel) + tuple(out_sp))
    padded = tuple(d + b + max(e, 0) for d, b, e in zip(x_shape[2:], pb, pe))
    # windows may reach past the padded end when (in + pads - k) % stride != 0: grow buf
    need = tuple(max(p, (o - 1) * s + (k - 1) * d + 1)
                 for p, o, s, k, d in zip(padded, out_sp, strides, kernel, dil))
    buf = np.zeros((n, c) + need, dtype=dy.dtype)
    _col2im(cols, buf, kernel, strides, dil, out_sp)
    crop = (slice(None), slice(None)) + tuple(slice(b, b + d) for b, d in zip(pb, x_shape[2:]))
    return (np.ascontiguousarray(buf[crop]),)


def _tap_range(p, d, s, pad, n_out, n_in):
    """Output positions o in [lo, hi) whose tap p lands inside the input, and the first
    input index it lands on: i = o*s + p*d - pad with 0 <= i < n_in."""
    off = p * d - pad
    lo = max(0, -(off // s))              # ceil(-off / s)
    hi = min(n_out, (n_in - 1 - off) // s + 1) if n_in - 1 - off >= 0 else 0
    return lo, max(lo, hi), lo * s + off


def _strided_1x1(kernel, strides, pb, out_sp, in_sp):
    """True when a 2-D Conv is a 1x1 kernel reading the input at o * stride for every
    output position o: no begin pads, and end pads (if any) add no output position past
    the input (a padded output pixel reads only zeros, which the strided view lacks)."""
    return (tuple(kernel) == (1, 1) and not any(pb)
            and all(0 < o and (o - 1) * s < n for o, s, n in zip(out_sp, strides, in_sp)))


def _conv_grad_input_2d(dy, w, x_shape, kernel, strides, dil, pb, out_sp):
    """Group-1 2-D dL/dX, channels-last: ONE GEMM (N*Ho*Wo, M) @ (M, kh*kw*C) gives every
    tap's contribution at every output pixel; col2im then adds each tap's block into
    dX (N, H, W, C) over the pixels it reaches (pads cropped by the index ranges, no
    padded buffer), so the add loops run over kernel taps only, C-contiguous."""
    cdt = _compute_dtype(dy.dtype)
    n, c, h, wd = x_shape
    m = w.shape[0]
    (kh, kw), (sh, sw), (dh, dw), (ho, wo) = kernel, strides, dil, out_sp
    dyt = np.empty((n, ho, wo, m), cdt)
    np.copyto(dyt, dy.transpose(0, 2, 3, 1))
    if _strided_1x1(kernel, strides, pb, out_sp, (h, wd)):
        # 1x1: the GEMM result is the gradient at the strided input positions
        z = np.matmul(dyt.reshape(-1, m), np.asarray(w, cdt).reshape(m, c))
        dx = np.zeros((n, h, wd, c), cdt)
        dx[:, :(ho - 1) * sh + 1:sh, :(wo - 1) * sw + 1:sw] = z.reshape(n, ho, wo, c)
    else:
        wt = np.empty((m, kh, kw, c), cdt)
        np.copyto(wt, w.transpose(0, 2, 3, 1))
        z = np.matmul(dyt.reshape(-1, m), wt.reshape(m, -1)).reshape(n, ho, wo, kh, kw, c)
        dx = np.zeros((n, h, wd, c), cdt)
        for i in range(kh):
            a0, a1, r0 = _tap_range(i, dh, sh, pb[0], ho, h)
            if a1 <= a0:
                continue
            rows = slice(r0, r0 + (a1 - a0 - 1) * sh + 1, sh)
            for j in range(kw):
                b0, b1, c0 = _tap_range(j, dw, sw, pb[1], wo, wd)
                if b1 <= b0:
                    continue
                dx[:, rows, c0:c0 + (b1 - b0 - 1) * sw + 1:sw] += z[:, a0:a1, b0:b1, i, j]
    out = np.empty(x_shape, dy.dtype)
    np.copyto(out, dx.transpose(0, 3, 1, 2))
    return out


def _conv_grad_filter(inputs, attrs, ctx):
    """dL/dW of ONNX Conv: inputs x (N, C, *S), dy (N, M, *O), W (for its shape)."""
    x, dy, w_shape = _f(inputs[0]), _f(inputs[1]), tuple(np.shape(inputs[2]))
    group = int(attrs["group"] or 1)
    kernel, strides, dil, pb, pe, out_sp = _conv_geometry(x.shape, w_shape, attrs)
    if group == 1 and len(kernel) == 2:
        return (_conv_grad_filter_2d(x, dy, w_shape, kernel, strides, dil, pb, out_sp),)
    n, c = x.shape[:2]
    m = w_shape[0]
    cg, mg = c // group, m // group
    kk = cg * int(np.prod(kernel))
    npix = int(np.prod(out_sp))
    xp = _pad(x, pb, [max(e, 0) for e in pe])
    cols = _im2col(xp, kernel, strides, dil, out_sp).reshape(n, group, kk, npix)
    # one GEMM per group over the whole batch: (Mg, N*P) @ (N*P, Kg)
    dy_g = np.moveaxis(dy.reshape(n, group, mg, npix), 0, 2).reshape(group, mg, n * npix)
    cols_g = np.moveaxis(cols, 0, 2).reshape(group, kk, n * npix)
    dw = np.matmul(dy_g, np.swapaxes(cols_g, 1, 2))
    return (dw.reshape(w_shape).astype(x.dtype, copy=False),)


def _conv_grad_filter_2d(x, dy, w_shape, kernel, strides, dil, pb, out_sp):
    """Group-1 2-D dL/dW, channels-last: im2col built once as a contiguous (N*Ho*Wo,
    kh*kw*C) matrix (one C-contiguous slice copy per tap from a zero-padded NHWC copy
    of x), then ONE GEMM (M, N*Ho*Wo) @ (N*Ho*Wo, kh*kw*C)."""
    cdt = _compute_dtype(x.dtype)
    n, c, h, wd = x.shape
    m = w_shape[0]
    (kh, kw), (sh, sw), (dh, dw), (ho, wo) = kernel, strides, dil, out_sp
    dyT = np.empty((m, n, ho, wo), cdt)
    np.copyto(dyT, dy.transpose(1, 0, 2, 3))
    cols = np.empty((n, ho, wo, kh, kw, c), cdt)
    if _strided_1x1(kernel, strides, pb, out_sp, (h, wd)):
        np.copyto(cols[:, :, :, 0, 0], x[:, :, :(ho - 1) * sh + 1:sh,
                                        :(wo - 1) * sw + 1:sw].transpose(0, 2, 3, 1))
    else:
        # zero-padded NHWC copy big enough for every window (ends may be cropped or grown)
        hp = max(pb[0] + h, (ho - 1) * sh + (kh - 1) * dh + 1)
        wp = max(pb[1] + wd, (wo - 1) * sw + (kw - 1) * dw + 1)
        xp = np.zeros((n, hp, wp, c), cdt)
        np.copyto(xp[:, pb[0]:pb[0] + h, pb[1]:pb[1] + wd], x.transpose(0, 2, 3, 1))
        for i in range(kh):
            rows = slice(i * dh, i * dh + (ho - 1) * sh + 1, sh)
            for j in range(kw):
                np.copyto(cols[:, :, :, i, j],
                          xp[:, rows, j * dw:j * dw + (wo - 1) * sw + 1:sw])
    dw_ = np.matmul(dyT.reshape(m, -1), cols.reshape(-1, kh * kw * c))
    out = np.empty(w_shape, x.dtype)
    np.copyto(out, dw_.reshape(m, kh, kw, c).transpose(0, 3, 1, 2))
    return out


def _conv_grad_bias(inputs, attrs, ctx):
    """dL/dB of ONNX Conv: dy summed over every axis but the channel axis."""
    dy = _f(inputs[0])
    if dy.ndim < 2 or not dy.flags.c_contiguous:
        return (np.sum(dy, axis=(0,) + tuple(range(2, dy.ndim))),)
    # sum the batch first (contiguous rows), then each channel's pixels
    n, m = dy.shape[:2]
    per = np.add.reduce(dy.reshape(n, -1), axis=0)
    return (np.add.reduce(per.reshape(m, -1), axis=1),)


def _conv_transpose_adjoint(dy, x_shape, w_shape, attrs):
    """ConvTranspose(x, w) as the adjoint of a Conv, resolved for this run's x: (the
    part of dy that x reaches, the Conv's attributes). The full transposed output (no
    pads, no output_padding) is R = s (n - 1) + (k - 1) d + 1 long per axis, and a Conv
    with these strides maps a length-R signal back to length n. dy covers full
    positions [pb, pb + out); positions outside [0, R) (output_padding, an output_shape
    past the natural size, negative pads) get nothing from x and are cropped away, and
    the full positions dy lacks (cut by the pads) become the Conv's zero padding."""
    strides, dil, pb, pe, out_sp = _convtranspose_geometry(
        list(x_shape[2:]), list(w_shape[2:]), attrs)
    crop, begins, ends = [slice(None), slice(None)], [], []
    for n, k, s, d, b, o in zip(x_shape[2:], w_shape[2:], strides, dil, pb, out_sp):
        reach = s * (n - 1) + (k - 1) * d + 1
        lo = max(0, -b)
        hi = max(lo, min(o, reach - b))
        crop.append(slice(lo, hi))
        begins.append(lo + b)
        ends.append(reach - (hi + b))
    conv_attrs = {"strides": list(strides), "dilations": list(dil),
                  "pads": begins + ends, "group": int(attrs.get("group") or 1),
                  "auto_pad": "NOTSET", "kernel_shape": list(w_shape[2:])}
    return dy[tuple(crop)], conv_attrs


def _conv_transpose_grad_input(inputs, attrs, ctx):
    """dL/dX of ONNX ConvTranspose: inputs dy, W (C, M/g, *k), x (for its shape); the
    geometry (auto_pad, output_shape, pads) is resolved for x's shape at run time."""
    dy, w, x = _f(inputs[0]), _f(inputs[1]), _f(inputs[2])
    part, conv_attrs = _conv_transpose_adjoint(dy, x.shape, w.shape, attrs)
    if part.size == 0:  # no output position reads x
        return (np.zeros(x.shape, np.result_type(dy, w)),)
    return (conv_nd(part, w, None, conv_attrs),)


def _conv_transpose_grad_filter(inputs, attrs, ctx):
    """dL/dW of ONNX ConvTranspose: inputs dy, x, W (for its shape): the Conv weight
    gradient with dy's reached part as the Conv's input and x as its output gradient."""
    dy, x, w = _f(inputs[0]), _f(inputs[1]), _f(inputs[2])
    part, conv_attrs = _conv_transpose_adjoint(dy, x.shape, w.shape, attrs)
    if part.size == 0:
        return (np.zeros(w.shape, np.result_type(dy, x)),)
    return _conv_grad_filter([part, x, w], conv_attrs, ctx)


def _pool_geom(x_shape, attrs):
    kernel = [int(k) for k in attrs["kernel_shape"]]
    strides, dil, pb, pe, out_sp = _pool_geometry(tuple(x_shape[2:]), kernel, attrs,
                                                  bool(attrs["ceil_mode"]))
    return kernel, strides, dil, pb, pe, out_sp


def _padded_buffer(x_shape, kernel, strides, dil, pb, pe, out_sp, dtype, fill=0):
    sp = tuple(max(d + b + max(e, 0), (o - 1) * s + (k - 1) * dd + 1)
               for d, b, e, o, s, k, dd in zip(x_shape[2:], pb, pe, out_sp, strides, kernel,
                                               dil))
    return np.full(tuple(x_shape[:2]) + sp, fill, dtype=dtype)


def _max_pool_grad(inputs, attrs, ctx):
    """dL/dX of MaxPool: inputs x, dy; each window's dy goes to its first maximum."""
    x, dy = _f(inputs[0]), _f(inputs[1])
    kernel, strides, dil, pb, pe, out_sp = _pool_geom(x.shape, attrs)
    if len(kernel) == 2 and list(kernel) == list(strides) and not any(pb) and all(
            d == 1 for d in dil) and all(o * k <= n for o, k, n in zip(out_sp, kernel,
                                                                        x.shape[2:])):
        return (_max_pool_grad_tiled(x, dy, kernel, out_sp),)
    taps, best_tap, inner, padded = _first_max_taps(x, attrs)
    dxp = np.zeros(padded, dtype=dy.dtype)
    for i, sl in enumerate(taps):
        dxp[sl] += np.where(best_tap == i, dy, 0)
    return (np.ascontiguousarray(dxp[inner]),)


def _first_max_taps(x, attrs):
    """MaxPool's windows over x: (each tap's slice of the padded x, the tap holding each
    window's first maximum (row-major tap order, as MaxPool's Indices), x's place in
    the padded array, the padded shape)."""
    kernel, strides, dil, pb, pe, out_sp = _pool_geom(x.shape, attrs)
    all_ = (slice(None), slice(None))
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xp = _padded_buffer(x.shape, kernel, strides, dil, pb, pe, out_sp, x.dtype, low)
    inner = all_ + tuple(slice(b, b + d) for b, d in zip(pb, x.shape[2:]))
    xp[inner] = x
    best = None
    best_tap = None
    taps = [all_ + sl for _, sl in _window_slices(kernel, strides, dil, out_sp)]
    for i, sl in enumerate(taps):
        v = xp[sl]
        if best is None:
            best = v.copy()
            best_tap = np.zeros(v.shape, np.int32)
        else:
            better = v > best
            best = np.where(better, v, best)
            best_tap = np.where(better, i, best_tap)
    return taps, best_tap, inner, xp.shape


def _max_pool_grad_grad(inputs, attrs, ctx):
    """The gradient of MaxPoolGrad with respect to its dy (TF's MaxPoolGradGrad):
    inputs x, g (shaped like x); g read at each window's first maximum, where
    MaxPoolGrad sends the window's dy."""
    x, g = _f(inputs[0]), _f(inputs[1])
    taps, best_tap, inner, padded = _first_max_taps(x, attrs)
    gp = np.zeros(padded, dtype=g.dtype)
    gp[inner] = g
    out = np.zeros(best_tap.shape, dtype=g.dtype)
    for i, sl in enumerate(taps):
        out += np.where(best_tap == i, gp[sl], 0)
    return (out,)


def _max_pool_grad_tiled(x, dy, kernel, out_sp):
    """Non-overlapping 2-D windows: each tile's dy goes to its first maximum (row-major
    tap order, as MaxPool's Indices).

    When the tiles cover x exactly, the arg-max is found separably on flat views (no
    small inner loops): first along each window row (kw taps, 1-D strided views of the
    flat x), then among the kh row maxima; dy is routed back the same way. Ties go to
    the first tap of each stage, i.e. the first maximum in row-major order."""
    n, c, h, w = x.shape
    (kh, kw), (oh, ow) = kernel, out_sp
    if oh * kh != h or ow * kw != w or not x.flags.c_contiguous or x.size == 0:
        return _max_pool_grad_tiled_views(x, dy, kernel, out_sp)
    rows = n * c * oh
    jh, mh = _first_max(x.reshape(-1, kw), kw)           # per window row: (rows*kh*ow,)
    iv, _ = _first_max(mh.reshape(rows, kh, ow), kh, axis=1, need_max=False)  # (rows, ow)
    d = np.asarray(dy).reshape(rows, ow)
    g = np.empty((rows, kh, ow), dy.dtype)                # dy on the winning window row
    for i in range(kh):
        np.multiply(d, (iv if i else ~iv) if kh == 2 else iv == i, out=g[:, i])
    g = g.reshape(-1)
    dx = np.empty(x.shape, dy.dtype)
    dxr = dx.reshape(-1, kw)
    for j in range(kw):
        np.multiply(g, (jh if j else ~jh) if kw == 2 else jh == j, out=dxr[:, j])
    return dx


def _first_max(v, k, axis=-1, need_max=True):
    """Index of the first maximum among the k entries along `axis` of v, and the
    maximum (bool index for k == 2, else int8; the maximum is None unless needed)."""
    take = (lambda t: v[..., t]) if axis == -1 else (lambda t: v[:, t])
    if k == 2:
        a, b = take(0), take(1)
        return b > a, (np.maximum(a, b) if need_max else None)
    best = take(0).copy()
    idx = np.zeros(best.shape, np.int8)
    for t in range(1, k):
        cand = take(t)
        idx[cand > best] = t
        np.maximum(best, cand, out=best)
    return idx, best


def _max_pool_grad_tiled_views(x, dy, kernel, out_sp):
    """Non-overlapping 2-D windows not covering x exactly: one strided view per tap."""
    n, c = x.shape[:2]
    (kh, kw), (oh, ow) = kernel, out_sp
    tiles = x[:, :, :oh * kh, :ow * kw].reshape(n, c, oh, kh, ow, kw)
    taps = [tiles[:, :, :, i, :, j] for i in range(kh) for j in range(kw)]
    best = taps[0].copy()
    for t in taps[1:]:
        np.maximum(best, t, out=best)  # faster than a multi-axis reduce over the view
    dx = np.zeros(x.shape, dtype=dy.dtype)
    dtiles = dx[:, :, :oh * kh, :ow * kw].reshape(n, c, oh, kh, ow, kw)  # a view of dx
    free = np.ones(best.shape, dtype=bool)
    for k, t in enumerate(taps):
        i, j = divmod(k, kw)
        hit = t == best
        hit &= free
        free &= ~hit
        np.multiply(dy, hit, out=dtiles[:, :, :, i, :, j])
    return dx


def _average_pool_grad(inputs, attrs, ctx):
    """dL/dX of AveragePool: inputs x (for its shape), dy."""
    x_shape, dy = np.shape(inputs[0]), _f(inputs[1])
    kernel, strides, dil, pb, pe, out_sp = _pool_geom(x_shape, attrs)
    all_ = (slice(None), slice(None))
    include = bool(attrs["count_include_pad"])
    counts = np.ones((), dtype=np.int64)
    for n, k, s, d, b, e, o in zip(x_shape[2:], kernel, strides, dil, pb, pe, out_sp):
        t = np.arange(o)[:, None] * s - b + np.arange(k)[None, :] * d
        lo, hi = (-b, n + e) if include else (0, n)
        counts = np.multiply.outer(counts, ((t >= lo) & (t < hi)).sum(axis=1))
    share = dy / np.maximum(counts, 1).astype(dy.dtype)
    buf = _padded_buffer(x_shape, kernel, strides, dil, pb, pe, out_sp, dy.dtype)
    for _, sl in _window_slices(kernel, strides, dil, out_sp):
        buf[all_ + sl] += share
    inner = all_ + tuple(slice(b, b + d) for b, d in zip(pb, x_shape[2:]))
    return (np.ascontiguousarray(buf[inner]),)


# --------------------------------------------------------------------------- indexing

def _gather_grad(inputs, attrs, ctx):
    """dL/d(data) of ONNX Gather on any axis: dy scatter-added into zeros shaped like data
    at `indices` along `axis` (negative indices wrap; repeats accumulate)."""
    dy, data, idx = _f(inputs[0]), inputs[1], _f(inputs[2]).astype(np.int64)
    shape = np.shape(data)
    axis = int(attrs["axis"]) % len(shape)
    idx = np.where(idx < 0, idx + shape[axis], idx)
    out = np.zeros(shape, dtype=dy.dtype)
    # move the gathered axis to the front: out_m[i] += dy_m[j] for every index j
    moved = np.moveaxis(out, axis, 0)
    dy_m = np.moveaxis(dy.reshape(shape[:axis] + (idx.size,) + shape[axis + 1:]), axis, 0)
    np.add.at(moved, idx.reshape(-1), dy_m)
    return (out,)


def _gather_nd_grad(inputs, attrs, ctx):
    """dL/d(data) of ONNX GatherND with `batch_dims`: dy scatter-added into zeros shaped
    like data, batch by batch, at the index tuples (negative entries wrap; repeats
    accumulate). The batch dims are flattened into one, which prefixes each tuple."""
    dy, data, idx = _f(inputs[0]), inputs[1], np.asarray(inputs[2]).astype(np.int64)
    shape, bd = tuple(np.shape(data)), int(attrs["batch_dims"])
    k = idx.shape[-1]
    out = np.zeros(shape, dtype=dy.dtype)
    nb = int(np.prod(shape[:bd], dtype=np.int64))
    m = int(np.prod(idx.shape[bd:-1], dtype=np.int64))
    flat = out.reshape((nb,) + shape[bd:])
    tuples = idx.reshape(nb, m, k)
    dims = np.asarray(shape[bd:bd + k], dtype=np.int64)
    tuples = np.where(tuples < 0, tuples + dims, tuples)
    batch = np.broadcast_to(np.arange(nb)[:, None], (nb, m))
    np.add.at(flat, (batch,) + tuple(tuples[..., j] for j in range(k)),
              dy.reshape((nb, m) + shape[bd + k:]))
    return (out,)


def _compress_grad(inputs, attrs, ctx):
    """dL/d(input) of ONNX Compress: dy written back where condition kept a slice."""
    dy, x, cond = _f(inputs[0]), inputs[1], np.asarray(inputs[2]).astype(bool).reshape(-1)
    shape = np.shape(x)
    out = np.zeros(shape, dtype=dy.dtype)
    if attrs["axis"] is None:
        flat = out.reshape(-1)
        n = min(flat.size, cond.size)
        flat[np.nonzero(cond[:n])[0]] = dy.reshape(-1)
        return (out,)
    axis = int(attrs["axis"]) % len(shape)
    keep = np.nonzero(cond[:shape[axis]])[0]
    sl = [slice(None)] * len(shape)
    sl[axis] = keep
    out[tuple(sl)] = dy
    return (out,)


def _resize_grad(inputs, attrs, ctx):
    """dL/dX of ONNX Resize (nearest, linear, cubic): the adjoint of the separable
    per-axis resampling, i.e. each output's dy scatter-added onto the input taps it read
    with the same weights. Inputs: dy, X (for its shape), roi?, scales?, sizes?."""
    from .shape import _nearest_index, _resize_plan, _source_coords, _taps

    dy, x_shape = _f(inputs[0]), tuple(np.shape(inputs[1]))
    get = (lambda i: inputs[i] if len(inputs) > i and inputs[i] is not None
           and np.asarray(inputs[i]).size else None)
    roi, scales, sizes = get(2), get(3), get(4)
    out_shape, scale, starts, ends = _resize_plan(x_shape, scales, sizes, roi, attrs)
    mode, ctm = attrs["mode"], attrs["coordinate_transformation_mode"]
    if mode not in ("nearest", "linear", "cubic"):
        raise ExecutionError(f"ResizeGrad: unknown mode {mode!r}")
    g = np.asarray(dy, dtype=np.float64)
    if g.size == 0:  # an empty output read no input: the plans below need some taps
        return (np.zeros(x_shape, dtype=dy.dtype),)
    plans = []
    for axis in range(len(x_shape)):
        if out_shape[axis] == x_shape[axis] and scale[axis] == 1.0 and \
                ctm != "tf_crop_and_resize":
            continue
        in_len = x_shape[axis]
        coord = _source_coords(out_shape[axis], in_len, scale[axis], starts[axis],
                               ends[axis], ctm)
        if ctm == "tf_crop_and_resize":
            # outputs outside the input got the extrapolation value: no gradient
            bad = (coord < 0) | (coord > in_len - 1)
            shp = [1] * len(x_shape)
            shp[axis] = out_shape[axis]
            g = np.where(bad.reshape(shp), 0.0, g)
        if mode == "nearest":
            idx = _nearest_index(coord, in_len, attrs["nearest_mode"])[:, None]
            w = np.ones(idx.shape)
        else:
            idx, w = _taps(coord, in_len, scale[axis], attrs)
        plans.append((axis, in_len, idx, w))
    # the forward resamples axes in increasing order; the adjoint undoes them in reverse
    for axis, in_len, idx, w in reversed(plans):
        moved = np.moveaxis(g, axis, 0)                     # (out, ...)
        contrib = w.reshape(w.shape + (1,) * (moved.ndim - 1)) * moved[:, None]
        acc = np.zeros((in_len,) + moved.shape[1:])
        np.add.at(acc, idx.reshape(-1), contrib.reshape((-1,) + moved.shape[1:]))
        g = np.moveaxis(acc, 0, axis)
    return (np.array(g, dtype=dy.dtype),)


# --------------------------------------------------------------------------- LRN

def _lrn_grad(inputs, attrs, ctx):
    """dL/dX of ONNX LRN: y_c = x_c * s_c^-beta with s_c = bias + alpha/size * (sum of
    x^2 over the channel window of c), so dx_j = dy_j s_j^-beta - 2 alpha beta / size *
    x_j * (sum over the windows i containing j of dy_i x_i s_i^(-beta-1))."""
    dy, x = _f(inputs[0]), _f(inputs[1])
    size = int(attrs["size"])
    alpha, beta, bias = float(attrs["alpha"]), float(attrs["beta"]), float(attrs["bias"])
    xc = np.asarray(x, dtype=np.float64)
    c = x.shape[1]
    lo = (size - 1) // 2
    hi = size - 1 - lo

    def window_sum(v, before, after):
        pad = np.zeros((v.shape[0], c + size - 1) + v.shape[2:])
        pad[:, before:before + c] = v
        acc = pad[:, 0:c].copy()
        for i in range(1, size):
            acc += pad[:, i:i + c]
        return acc

    # window(i) = channels [i - lo, i + hi]; j lies in window(i) iff i in [j - hi, j + lo]
    s = bias + (alpha / size) * window_sum(xc * xc, lo, hi)
    t = np.asarray(dy, np.float64) * xc * s ** (-beta - 1)
    dx = dy * s ** -beta - (2 * alpha * beta / size) * xc * window_sum(t, hi, lo)
    return (dx.astype(x.dtype, copy=False),)


def _infer_like(k):
    def infer(attrs, inputs):
        t = inputs[k]
        return [TensorInfo(inputs[0].dtype if k != 0 else t.dtype, t.shape)]
    return infer


def _infer_first(attrs, inputs):
    return [TensorInfo(inputs[0].dtype, inputs[0].shape)]


def _infer_max_pool_grad_grad(attrs, inputs):
    """MaxPool's output shape for x (input 0), in g's dtype."""
    return [TensorInfo(inputs[1].dtype, _pooled_shape(inputs[0], attrs))]


# --------------------------------------------------------------------------- optimizers

def _refs(inputs, n, op):
    for i in range(n):
        if not isinstance(inputs[i], VariableRef):
            raise ExecutionError(f"{op}: input {i} must be a variable")
    return inputs[:n]


def _scalar(v):
    return np.asarray(v).reshape(())


def _apply_sgd(inputs, attrs, ctx):
    """var -= lr * grad."""
    (var,) = _refs(inputs, 1, "ApplyGradientDescent")
    lr, grad = _scalar(inputs[1]), _f(inputs[2])
    with var.lock:
        old = var.read()
        var.value = new = old - (lr * grad).astype(old.dtype, copy=False)
    return (new,)


def _sparse_rows(op, old, values, indices):
    """The distinct rows a sparse gradient touches and its summed value per row:
    (rows (R,), grads (R, *old.shape[1:])). Repeated indices are summed first, as TF1's
    optimizers do (`_deduplicate_indexed_slices`), so a row takes one step per run;
    negative indices count from the end, as Gather's do.

    Raises:
        ShapeError: values do not hold one row of the variable per index.
        ExecutionError: an index is outside the variable's rows.
    """
    if old.ndim == 0:
        raise ShapeError(f"{op}: the variable is a scalar, it has no rows")
    indices = np.asarray(indices).reshape(-1)
    if indices.dtype.kind not in "iu":
        raise ExecutionError(f"{op}: indices must be integers, got {indices.dtype}")
    values = np.asarray(values)
    if values.shape != indices.shape + old.shape[1:]:
        raise ShapeError(f"{op}: values {values.shape} do not hold one row of the "
                         f"variable {old.shape} for each of {indices.size} indices")
    n = old.shape[0]
    if indices.size and not (-n <= indices.min() and indices.max() < n):
        bad = indices[(indices < -n) | (indices >= n)][0]
        raise ExecutionError(f"{op}: index {bad} is outside the variable's {n} rows")
    rows, where = np.unique(indices.astype(np.int64) % max(n, 1), return_inverse=True)
    grads = np.zeros((rows.size,) + old.shape[1:], dtype=np.result_type(values, old))
    np.add.at(grads, where.reshape(-1), values)
    return rows, grads


def _sparse_apply_sgd(inputs, attrs, ctx):
    """var[indices] -= lr * values (rows along axis 0; repeats accumulate)."""
    (var,) = _refs(inputs, 1, "SparseApplyGradientDescent")
    lr, values, indices = _scalar(inputs[1]), _f(inputs[2]), _f(inputs[3])
    with var.lock:
        new = var.read().copy()
        rows, grads = _sparse_rows("SparseApplyGradientDescent", new, values, indices)
        new[rows] -= (lr * grads).astype(new.dtype, copy=False)
        var.value = new
    return (new,)


def _apply_momentum(inputs, attrs, ctx):
    """accum = momentum * accum + grad; var -= lr * (grad + momentum * accum if nesterov
    else accum)."""
    var, accum = _refs(inputs, 2, "ApplyMomentum")
    lr, grad, mom = _scalar(inputs[2]), _f(inputs[3]), _scalar(inputs[4])
    with var.lock:
        old = var.read()
        acc = (mom * accum.read() + grad).astype(old.dtype, copy=False)
        step = grad + mom * acc if attrs["use_nesterov"] else acc
        accum.value = acc
        var.value = new = old - (lr * step).astype(old.dtype, copy=False)
    return (new,)


def _sparse_apply_momentum(inputs, attrs, ctx):
    """ApplyMomentum on the rows a sparse gradient touches (TF1's SparseApplyMomentum):
    the other rows keep their value and velocity."""
    var, accum = _refs(inputs, 2, "SparseApplyMomentum")
    lr, values, indices, mom = (_scalar(inputs[2]), _f(inputs[3]), _f(inputs[4]),
                                _scalar(inputs[5]))
    with var.lock:
        new, acc = var.read().copy(), accum.read().copy()
        rows, grad = _sparse_rows("SparseApplyMomentum", new, values, indices)
        a = (mom * acc[rows] + grad).astype(new.dtype, copy=False)
        step = grad + mom * a if attrs["use_nesterov"] else a
        acc[rows] = a
        new[rows] -= (lr * step).astype(new.dtype, copy=False)
        accum.value, var.value = acc, new
    return (new,)


def _apply_adagrad(inputs, attrs, ctx):
    """accum += grad^2; var -= lr * grad / (sqrt(accum) + epsilon)."""
    var, accum = _refs(inputs, 2, "ApplyAdagrad")
    lr, grad = _scalar(inputs[2]), _f(inputs[3])
    with var.lock:
        old = var.read()
        acc = (accum.read() + grad * grad).astype(old.dtype, copy=False)
        accum.value = acc
        step = lr * grad / (np.sqrt(acc) + old.dtype.type(attrs["epsilon"]))
        var.value = new = old - step.astype(old.dtype, copy=False)
    return (new,)


def _sparse_apply_adagrad(inputs, attrs, ctx):
    """ApplyAdagrad on the rows a sparse gradient touches (TF1's SparseApplyAdagrad)."""
    var, accum = _refs(inputs, 2, "SparseApplyAdagrad")
    lr, values, indices = _scalar(inputs[2]), _f(inputs[3]), _f(inputs[4])
    with var.lock:
        new, acc = var.read().copy(), accum.read().copy()
        rows, grad = _sparse_rows("SparseApplyAdagrad", new, values, indices)
        a = (acc[rows] + grad * grad).astype(new.dtype, copy=False)
        acc[rows] = a
        step = lr * grad / (np.sqrt(a) + new.dtype.type(attrs["epsilon"]))
        new[rows] -= step.astype(new.dtype, copy=False)
        accum.value, var.value = acc, new
    return (new,)


def _apply_rmsprop(inputs, attrs, ctx):
    """ms = rho*ms + (1-rho)*grad^2; mom = momentum*mom + lr*grad/sqrt(ms+eps); var -= mom."""
    var, ms, mom = _refs(inputs, 3, "ApplyRMSProp")
    lr, grad = _scalar(inputs[3]), _f(inputs[4])
    rho, momentum, eps = attrs["rho"], attrs["momentum"], attrs["epsilon"]
    with var.lock:
        old = var.read()
        new_ms = (rho * ms.read() + (1 - rho) * grad * grad).astype(old.dtype, copy=False)
        new_mom = (momentum * mom.read() + lr * grad / np.sqrt(new_ms + eps)).astype(
            old.dtype, copy=False)
        ms.value, mom.value = new_ms, new_mom
        var.value = new = old - new_mom
    return (new,)


def _centered_rmsprop_step(grad, mg, ms, mom, lr, attrs, dtype):
    """One centered RMSProp step of moving mean mg, mean square ms and momentum mom
    for `grad`: mg = rho*mg + (1-rho)*grad; ms = rho*ms + (1-rho)*grad^2; mom =
    momentum*mom + lr*grad/sqrt(ms - mg^2 + eps). Returns the three, in dtype."""
    rho, momentum, eps = attrs["rho"], attrs["momentum"], attrs["epsilon"]
    new_mg = (rho * mg + (1 - rho) * grad).astype(dtype, copy=False)
    new_ms = (rho * ms + (1 - rho) * grad * grad).astype(dtype, copy=False)
    denominator = np.sqrt(new_ms - new_mg * new_mg + eps)
    new_mom = (momentum * mom + lr * grad / denominator).astype(dtype, copy=False)
    return new_mg, new_ms, new_mom


def _apply_centered_rmsprop(inputs, attrs, ctx):
    """RMSProp on the gradient's variance (TF1's centered form, see
    `_centered_rmsprop_step`); var -= mom."""
    var, mg, ms, mom = _refs(inputs, 4, "ApplyCenteredRMSProp")
    lr, grad = _scalar(inputs[4]), _f(inputs[5])
    with var.lock:
        old = var.read()
        mg.value, ms.value, mom.value = _centered_rmsprop_step(
            grad, mg.read(), ms.read(), mom.read(), lr, attrs, old.dtype)
        var.value = new = old - mom.value
    return (new,)


def _sparse_apply_centered_rmsprop(inputs, attrs, ctx):
    """ApplyCenteredRMSProp on the rows a sparse gradient touches (TF1's
    SparseApplyCenteredRMSProp): the other rows keep their value and all three slots."""
    var, mg, ms, mom = _refs(inputs, 4, "SparseApplyCenteredRMSProp")
    lr, values, indices = _scalar(inputs[4]), _f(inputs[5]), _f(inputs[6])
    with var.lock:
        new, slots = var.read().copy(), [t.read().copy() for t in (mg, ms, mom)]
        rows, grad = _sparse_rows("SparseApplyCenteredRMSProp", new, values, indices)
        stepped = _centered_rmsprop_step(grad, *(t[rows] for t in slots), lr, attrs,
                                         new.dtype)
        for slot, value in zip(slots, stepped):
            slot[rows] = value
        new[rows] -= stepped[2]
        mg.value, ms.value, mom.value = slots
        var.value = new
    return (new,)


def _adadelta_step(grad, accum, accum_update, lr, attrs, dtype):
    """One Adadelta step (Zeiler) of the accumulators for `grad`: accum = rho*accum +
    (1-rho)*grad^2; update = sqrt(accum_update + eps) / sqrt(accum + eps) * grad;
    accum_update = rho*accum_update + (1-rho)*update^2. Returns (accum, accum_update,
    lr*update), in dtype."""
    rho, eps = attrs["rho"], attrs["epsilon"]
    new_accum = (rho * accum + (1 - rho) * grad * grad).astype(dtype, copy=False)
    update = (np.sqrt(accum_update + eps) / np.sqrt(new_accum + eps) * grad).astype(
        dtype, copy=False)
    new_update = (rho * accum_update + (1 - rho) * update * update).astype(dtype,
                                                                          copy=False)
    return new_accum, new_update, (lr * update).astype(dtype, copy=False)


def _apply_adadelta(inputs, attrs, ctx):
    """Adadelta (see `_adadelta_step`); var -= lr*update (TF1's ApplyAdadelta)."""
    var, accum, accum_update = _refs(inputs, 3, "ApplyAdadelta")
    lr, grad = _scalar(inputs[3]), _f(inputs[4])
    with var.lock:
        old = var.read()
        accum.value, accum_update.value, step = _adadelta_step(
            grad, accum.read(), accum_update.read(), lr, attrs, old.dtype)
        var.value = new = old - step
    return (new,)


def _sparse_apply_adadelta(inputs, attrs, ctx):
    """ApplyAdadelta on the rows a sparse gradient touches (TF1's SparseApplyAdadelta,
    repeated indices summed first): the other rows keep their value and both
    accumulators (they do not decay)."""
    var, accum, accum_update = _refs(inputs, 3, "SparseApplyAdadelta")
    lr, values, indices = _scalar(inputs[3]), _f(inputs[4]), _f(inputs[5])
    with var.lock:
        new, slots = var.read().copy(), [t.read().copy() for t in (accum, accum_update)]
        rows, grad = _sparse_rows("SparseApplyAdadelta", new, values, indices)
        new_accum, new_update, step = _adadelta_step(
            grad, slots[0][rows], slots[1][rows], lr, attrs, new.dtype)
        slots[0][rows], slots[1][rows] = new_accum, new_update
        new[rows] -= step
        accum.value, accum_update.value = slots
        var.value = new
    return (new,)


def _sparse_apply_rmsprop(inputs, attrs, ctx):
    """ApplyRMSProp on the rows a sparse gradient touches (TF1's SparseApplyRMSProp):
    the other rows keep their value, mean square and momentum."""
    var, ms, mom = _refs(inputs, 3, "SparseApplyRMSProp")
    lr, values, indices = _scalar(inputs[3]), _f(inputs[4]), _f(inputs[5])
    rho, momentum, eps = attrs["rho"], attrs["momentum"], attrs["epsilon"]
    with var.lock:
        new, new_ms, new_mom = var.read().copy(), ms.read().copy(), mom.read().copy()
        rows, grad = _sparse_rows("SparseApplyRMSProp", new, values, indices)
        m2 = (rho * new_ms[rows] + (1 - rho) * grad * grad).astype(new.dtype, copy=False)
        m1 = (momentum * new_mom[rows] + lr * grad / np.sqrt(m2 + eps)).astype(
            new.dtype, copy=False)
        new_ms[rows], new_mom[rows] = m2, m1
        new[rows] -= m1
        ms.value, mom.value, var.value = new_ms, new_mom, new
    return (new,)


def _apply_adam(inputs, attrs, ctx):
    """Adam (AdamW when weight_decay > 0: decoupled decay lr * wd * var) with bias
    correction from the step count t (input 4, counting from 1)."""
    var, m, v = _refs(inputs, 3, "ApplyAdam")
    lr, t, grad = _scalar(inputs[3]), float(_scalar(inputs[4])), _f(inputs[5])
    b1, b2, eps, wd = attrs["beta1"], attrs["beta2"], attrs["epsilon"], attrs["weight_decay"]
    with var.lock:
        old = var.read()
        dt = old.dtype.type
        alpha = dt(float(lr) * np.sqrt(1 - b2 ** t) / (1 - b1 ** t))
        eps_hat = dt(eps * np.sqrt(1 - b2 ** t))
        m_old, v_old = m.read(), v.read()
        if not (grad.dtype == m_old.dtype == v_old.dtype == old.dtype
                and grad.shape == old.shape == m_old.shape == v_old.shape):
            new_m = m_old * dt(b1) + grad * dt(1 - b1)
            new_v = v_old * dt(b2) + (grad * grad) * dt(1 - b2)
            step = alpha * new_m / (np.sqrt(new_v) + eps_hat)
            if wd:
                step = step + dt(float(lr) * wd) * old
            m.value = new_m.astype(old.dtype, copy=False)
            v.value = new_v.astype(old.dtype, copy=False)
            var.value = new = (old - step).astype(old.dtype, copy=False)
            return (new,)
        # same arithmetic, in four fresh buffers (no in-place change of any array a
        # reader may hold: m, v and var get new arrays, as VariableRef requires)
        tmp = np.multiply(grad, dt(1 - b1))
        new_m = np.multiply(m_old, dt(b1))
        new_m += tmp
        new_v = np.multiply(grad, grad)
        new_v *= dt(1 - b2)
        new_v += np.multiply(v_old, dt(b2), out=tmp)
        denom = np.sqrt(new_v, out=tmp)
        denom += eps_hat
        step = np.multiply(new_m, alpha)
        step /= denom
        if wd:
            step += np.multiply(old, dt(float(lr) * wd), out=tmp)
        m.value, v.value = new_m, new_v
        var.value = new = np.subtract(old, step, out=step)
    return (new,)


def _apply_adam_tf1(inputs, attrs, ctx):
    """TF1's ApplyAdam, epsilon "hat" form: lr_t = lr * sqrt(1 - beta2_power) / (1 -
    beta1_power); m += (grad - m) * (1 - beta1); v += (grad^2 - v) * (1 - beta2);
    var -= lr_t * m / (sqrt(v) + epsilon). beta1_power and beta2_power (inputs 3, 4)
    are beta1^t and beta2^t at step t (TF1's non-slot variables). Everything is
    computed in the variable's dtype from float32 hyper-parameters, as TF1 casts its
    float32 hyper-parameter tensors to the variable's dtype."""
    var, m, v = _refs(inputs, 3, "ApplyAdamTF1")
    grad = _f(inputs[6])
    with var.lock:
        old = var.read()
        dt = old.dtype.type
        b1p, b2p, lr = (dt(_scalar(inputs[i])) for i in (3, 4, 5))
        b1, b2, eps = (dt(np.float32(attrs[k])) for k in ("beta1", "beta2", "epsilon"))
        one = dt(1)
        alpha = lr * np.sqrt(one - b2p) / (one - b1p)
        m_old, v_old = m.read(), v.read()
        new_m = (m_old + (grad - m_old) * (one - b1)).astype(old.dtype, copy=False)
        new_v = (v_old + (grad * grad - v_old) * (one - b2)).astype(old.dtype, copy=False)
        step = (new_m * alpha) / (np.sqrt(new_v) + eps)
        m.value, v.value = new_m, new_v
        var.value = new = (old - step).astype(old.dtype, copy=False)
    return (new,)


def _infer_var(attrs, inputs):
    return [TensorInfo(inputs[0].dtype, inputs[0].shape)]


_CONV_ATTRS = (("auto_pad", "string", "NOTSET"), ("dilations", "ints", None),
               ("group", "int", 1), ("kernel_shape", "ints", None), ("pads", "ints", None),
               ("strides", "ints", None))
_CONV_TRANSPOSE_ATTRS = _CONV_ATTRS + (("output_padding", "ints", None),
                                      ("output_shape", "ints", None))
_POOL_ATTRS = (("auto_pad", "string", "NOTSET"), ("ceil_mode", "int", 0),
               ("dilations", "ints", None), ("kernel_shape", "ints"),
               ("pads", "ints", None), ("strides", "ints", None),
               ("storage_order", "int", 0), ("count_include_pad", "int", 0))
_REDUCE_ATTRS = (("axes", "ints", None), ("keepdims", "int", 1),
                 ("noop_with_empty_axes", "int", 0), ("mode", "string", "sum"))
_RESIZE_ATTRS = (("antialias", "int", 0), ("axes", "ints", None),
                 ("coordinate_transformation_mode", "string", "half_pixel"),
                 ("cubic_coeff_a", "float", -0.75), ("exclude_outside", "int", 0),
                 ("extrapolation_value", "float", 0.0),
                 ("keep_aspect_ratio_policy", "string", "stretch"),
                 ("mode", "string", "nearest"),
                 ("nearest_mode", "string", "round_prefer_floor"))
_UPDATE = dict(domain=DOMAIN, stateful=True, infer=_infer_var)
_HELPER = dict(domain=DOMAIN)

OPS = tuple(sorted((
    define("AddN", ["inputs*"], ["sum"], _add_n, infer=_infer_first, doc="sum of inputs",
           **_HELPER),
    define("ApplyAdadelta", ["var", "accum", "accum_update", "lr", "grad"], ["out"],
           _apply_adadelta, [("rho", "float", 0.95), ("epsilon", "float", 1e-8)],
           doc="Adadelta update", **_UPDATE),
    define("ApplyAdagrad", ["var", "accum", "lr", "grad"], ["out"], _apply_adagrad,
           [("epsilon", "float", 1e-7)], doc="AdaGrad update", **_UPDATE),
    define("ApplyAdam", ["var", "m", "v", "lr", "t", "grad"], ["out"], _apply_adam,
           [("beta1", "float", 0.9), ("beta2", "float", 0.999), ("epsilon", "float", 1e-8),
            ("weight_decay", "float", 0.0)], doc="Adam / AdamW update", **_UPDATE),
    define("ApplyAdamTF1", ["var", "m", "v", "beta1_power", "beta2_power", "lr", "grad"],
           ["out"], _apply_adam_tf1,
           [("beta1", "float", 0.9), ("beta2", "float", 0.999), ("epsilon", "float", 1e-8)],
           doc="TF1's Adam update (epsilon hat, beta powers)", **_UPDATE),
    define("ApplyCenteredRMSProp", ["var", "mg", "ms", "mom", "lr", "grad"], ["out"],
           _apply_centered_rmsprop,
           [("rho", "float", 0.9), ("momentum", "float", 0.0), ("epsilon", "float", 1e-10)],
           doc="centered RMSProp update", **_UPDATE),
    define("ApplyGradientDescent", ["var", "lr", "grad"], ["out"], _apply_sgd,
           doc="SGD update", **_UPDATE),
    define("ApplyMomentum", ["var", "accum", "lr", "grad", "momentum"], ["out"],
           _apply_momentum, [("use_nesterov", "int", 0)], doc="momentum update", **_UPDATE),
    define("ApplyRMSProp", ["var", "ms", "mom", "lr", "grad"], ["out"], _apply_rmsprop,
           [("rho", "float", 0.9), ("momentum", "float", 0.0), ("epsilon", "float", 1e-7)],
           doc="RMSProp update", **_UPDATE),
    define("AveragePoolGrad", ["x", "dy"], ["dx"], _average_pool_grad, _POOL_ATTRS,
           infer=_infer_like(0), doc="gradient of AveragePool", **_HELPER),
    define("BroadcastLike", ["input", "like"], ["output"], _broadcast_like,
           infer=_infer_like(1), doc="broadcast input 0 to input 1's shape", **_HELPER),
    define("CompressGrad", ["dy", "input", "condition"], ["dx"], _compress_grad,
           [("axis", "int", None)], infer=_infer_like(1), doc="gradient of Compress",
           **_HELPER),
    define("ConvGradBias", ["dy"], ["db"], _conv_grad_bias,
           infer=lambda a, i: [TensorInfo(i[0].dtype, None if i[0].shape is None
                                          else (i[0].shape[1],))],
           doc="gradient of Conv w.r.t. its bias", **_HELPER),
    define("ConvGradFilter", ["x", "dy", "w"], ["dw"], _conv_grad_filter, _CONV_ATTRS,
           infer=_infer_like(2), doc="gradient of Conv w.r.t. its weights", **_HELPER),
    define("ConvGradInput", ["dy", "w", "x"], ["dx"], _conv_grad_input, _CONV_ATTRS,
           infer=_infer_like(2), doc="gradient of Conv w.r.t. its input", **_HELPER),
    define("ConvTransposeGradFilter", ["dy", "x", "w"], ["dw"], _conv_transpose_grad_filter,
           _CONV_TRANSPOSE_ATTRS, infer=_infer_like(2),
           doc="gradient of ConvTranspose w.r.t. its weights", **_HELPER),
    define("ConvTransposeGradInput", ["dy", "w", "x"], ["dx"], _conv_transpose_grad_input,
           _CONV_TRANSPOSE_ATTRS, infer=_infer_like(2),
           doc="gradient of ConvTranspose w.r.t. its input", **_HELPER),
    define("GatherGrad", ["dy", "data", "indices"], ["dx"], _gather_grad,
           [("axis", "int", 0)], infer=_infer_like(1),
           doc="gradient of Gather w.r.t. data (dense, any axis)", **_HELPER),
    define("GatherNDGrad", ["dy", "data", "indices"], ["dx"], _gather_nd_grad,
           [("batch_dims", "int", 0)], infer=_infer_like(1),
           doc="gradient of GatherND w.r.t. data (with batch_dims)", **_HELPER),
    define("IndexedSlicesToDense", ["values", "indices", "like"], ["dense"],
           _indexed_slices_to_dense, infer=_infer_like(2),
           doc="scatter-add sparse rows into zeros shaped like input 2", **_HELPER),
    define("LRNGrad", ["dy", "x"], ["dx"], _lrn_grad,
           [("alpha", "float", 0.0001), ("beta", "float", 0.75), ("bias", "float", 1.0),
            ("size", "int")], infer=_infer_like(1), doc="gradient of LRN", **_HELPER),
    define("LogSoftmaxGrad", ["dy", "y"], ["dx"], _log_softmax_grad, [("axis", "int", -1)],
           infer=_infer_first, doc="gradient of LogSoftmax", **_HELPER),
    define("MaxPoolGradGrad", ["x", "g"], ["dy"], _max_pool_grad_grad, _POOL_ATTRS,
           infer=_infer_max_pool_grad_grad, doc="gradient of MaxPoolGrad w.r.t. its dy",
           **_HELPER),
    define("MaxPoolGrad", ["x", "dy"], ["dx"], _max_pool_grad, _POOL_ATTRS,
           infer=_infer_like(0), doc="gradient of MaxPool", **_HELPER),
    define("OnesLike", ["input"], ["output"], _ones_like, infer=_infer_first,
           doc="ones shaped like the input", **_HELPER),
    define("ReduceGrad", ["dy", "x", "y", "axes?"], ["dx"], _reduce_grad, _REDUCE_ATTRS,
           infer=_infer_like(1), doc="gradient of Reduce{Sum,Mean,Max,Min,SumSquare}",
           **_HELPER),
    define("ReluGrad", ["dy", "y"], ["dx"], _relu_grad, infer=_infer_first,
           doc="gradient of Relu from its output", **_HELPER),
    define("ResizeGrad", ["dy", "X", "roi?", "scales?", "sizes?"], ["dx"], _resize_grad,
           _RESIZE_ATTRS, infer=_infer_like(1), doc="gradient of Resize w.r.t. X",
           **_HELPER),
    define("SigmoidGrad", ["dy", "y"], ["dx"], _sigmoid_grad, infer=_infer_first,
           doc="gradient of Sigmoid from its output", **_HELPER),
    define("SliceGrad", ["dy", "x", "starts", "ends", "axes?", "steps?"], ["dx"], _slice_grad,
           infer=_infer_like(1), doc="gradient of Slice", **_HELPER),
    define("SoftmaxCrossEntropyWithLogits", ["logits", "labels"], ["loss", "backprop"],
           _softmax_xent, infer=_infer_xent, doc="softmax cross-entropy, dense labels",
           **_HELPER),
    define("SoftmaxGrad", ["dy", "y"], ["dx"], _softmax_grad, [("axis", "int", -1)],
           infer=_infer_first, doc="gradient of Softmax", **_HELPER),
    define("SparseApplyAdadelta", ["var", "accum", "accum_update", "lr", "values",
                                   "indices"], ["out"], _sparse_apply_adadelta,
           [("rho", "float", 0.95), ("epsilon", "float", 1e-8)],
           doc="Adadelta update of the rows a sparse gradient touches", **_UPDATE),
    define("SparseApplyAdagrad", ["var", "accum", "lr", "values", "indices"], ["out"],
           _sparse_apply_adagrad, [("epsilon", "float", 1e-7)],
           doc="AdaGrad update of the rows a sparse gradient touches", **_UPDATE),
    define("SparseApplyCenteredRMSProp", ["var", "mg", "ms", "mom", "lr", "values",
                                          "indices"], ["out"],
           _sparse_apply_centered_rmsprop,
           [("rho", "float", 0.9), ("momentum", "float", 0.0), ("epsilon", "float", 1e-10)],
           doc="centered RMSProp update of the rows a sparse gradient touches", **_UPDATE),
    define("SparseApplyGradientDescent", ["var", "lr", "values", "indices"], ["out"],
           _sparse_apply_sgd, doc="sparse SGD update of rows", **_UPDATE),
    define("SparseApplyMomentum", ["var", "accum", "lr", "values", "indices", "momentum"],
           ["out"], _sparse_apply_momentum, [("use_nesterov", "int", 0)],
           doc="momentum update of the rows a sparse gradient touches", **_UPDATE),
    define("SparseApplyRMSProp", ["var", "ms", "mom", "lr", "values", "indices"], ["out"],
           _sparse_apply_rmsprop,
           [("rho", "float", 0.9), ("momentum", "float", 0.0), ("epsilon", "float", 1e-7)],
           doc="RMSProp update of the rows a sparse gradient touches", **_UPDATE),
    define("SparseSoftmaxCrossEntropyWithLogits", ["logits", "labels"], ["loss", "backprop"],
           _sparse_softmax_xent, infer=_infer_xent,
           doc="softmax cross-entropy, integer labels", **_HELPER),
    define("SumToShapeOf", ["input", "like"], ["output"], _sum_to_shape_of,
           infer=_infer_like(1), doc="sum input 0 down to input 1's shape", **_HELPER),
    define("TanhGrad", ["dy", "y"], ["dx"], _tanh_grad, infer=_infer_first,
           doc="gradient of Tanh from its output", **_HELPER),
    define("ZerosLike", ["input"], ["output"], _zeros_like, infer=_infer_first,
           doc="zeros shaped like the input", **_HELPER),
), key=lambda op: op.name))

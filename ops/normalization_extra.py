"""Operators: transformer-era normalisation and activation ops.

RMSNormalization (opset 23), Swish (24), SwiGLU and RotaryEmbedding (23). Results keep
the input dtype; float16/bfloat16 inputs are computed in float32 (RMSNormalization's
`stash_type` 1 asks for exactly that), float64 in float64.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .common import infer_same
from .registry import TensorInfo, define


def _wide(x):
    x = np.asarray(x)
    return x.astype(np.float64) if x.dtype == np.float64 else x.astype(np.float32)


def _rms_norm_kernel(inputs, attrs, ctx):
    """x / sqrt(mean(x^2 over axes axis..-1) + epsilon) * scale."""
    x, scale = np.asarray(inputs[0]), np.asarray(inputs[1])
    rank = x.ndim
    axis = attrs["axis"]
    if not -rank <= axis < rank:
        raise OpAttributeError(f"RMSNormalization: axis {axis} out of range for rank {rank}")
    axes = tuple(range(axis % rank, rank))
    xf = x.astype(np.float64) if attrs["stash_type"] == 11 else _wide(x)
    ms = np.mean(xf * xf, axis=axes, keepdims=True)
    y = xf / np.sqrt(ms + xf.dtype.type(attrs["epsilon"]))
    y = y * _wide(scale).astype(y.dtype)
    return (y.astype(x.dtype),)


def _sigmoid(v):
    e = np.exp(-np.abs(v))
    return np.where(v >= 0, 1 / (1 + e), e / (1 + e))


def _swish_kernel(inputs, attrs, ctx):
    """x * sigmoid(alpha * x)."""
    x = np.asarray(inputs[0])
    xf = _wide(x)
    y = xf * _sigmoid(xf * xf.dtype.type(attrs["alpha"]))
    return (y.astype(x.dtype),)


def _swiglu_kernel(inputs, attrs, ctx):
    """Swish_alpha(A) * B, A and B of the same shape."""
    a, b = np.asarray(inputs[0]), np.asarray(inputs[1])
    if a.shape != b.shape:
        raise ShapeError(f"SwiGLU: A {a.shape} and B {b.shape} must have the same shape")
    af = _wide(a)
    y = af * _sigmoid(af * af.dtype.type(attrs["alpha"])) * _wide(b).astype(af.dtype)
    return (y.astype(a.dtype),)


def _swiglu_infer(attrs, inputs):
    a, b = inputs
    if a.shape is not None and b.shape is not None and len(a.shape) == len(b.shape):
        for p, q in zip(a.shape, b.shape):
            if p is not None and q is not None and p != q:
                raise ShapeError(f"SwiGLU: A {a.shape} and B {b.shape} differ")
    return [TensorInfo(a.dtype, a.shape if a.shape is not None else b.shape)]


def _rotary_kernel(inputs, attrs, ctx):
    """Rotate pairs of features by position-dependent angles (RoPE).

    X is (B, H, S, D) or (B, S, H*D) (then `num_heads` is required); the caches are
    (max_pos, R/2) indexed by position_ids (B, S), or already (B, S, R/2). Only the
    first R = rotary_embedding_dim features (default D) rotate; pairs are the two halves
    of those features, or even/odd neighbours when `interleaved`.
    """
    x = np.asarray(inputs[0])
    cos, sin = np.asarray(inputs[1]), np.asarray(inputs[2])
    pos = inputs[3] if len(inputs) > 3 else None
    if x.ndim == 4:
        v = x.transpose(0, 2, 1, 3)  # (B, S, H, D)
    elif x.ndim == 3:
        heads = attrs["num_heads"]
        if not heads:
            raise OpAttributeError("RotaryEmbedding: 3-D input needs num_heads")
        if heads < 0:
            raise OpAttributeError(f"RotaryEmbedding: num_heads must be positive, got {heads}")
        b, s, hidden = x.shape
        if hidden % heads:
            raise ShapeError(f"RotaryEmbedding: hidden size {hidden} not divisible by "
                             f"num_heads {heads}")
        v = x.reshape(b, s, heads, hidden // heads)
    else:
        raise ShapeError(f"RotaryEmbedding: input must be 3-D or 4-D, got {x.shape}")
    d = v.shape[3]
    r = attrs["rotary_embedding_dim"] or d
    if r < 0 or r > d or r % 2:
        raise OpAttributeError(f"RotaryEmbedding: rotary_embedding_dim {r} must be even and "
                               f"<= head size {d}")
    batch, seq = v.shape[:2]
    if pos is not None:
        pos = np.asarray(pos).astype(np.int64)
        if cos.ndim != 2 or sin.ndim != 2:
            raise ShapeError(f"RotaryEmbedding: with position_ids the caches must be 2-D "
                             f"(max_position, {r // 2}), got cos_cache {cos.shape} and "
                             f"sin_cache {sin.shape}")
        if pos.ndim != 2 or pos.shape[1] != seq or pos.shape[0] not in (1, batch):
            # (1, sequence) broadcasts over the batch, as before (and as the reference
            # does; onnxruntime wants the batch)
            raise ShapeError(f"RotaryEmbedding: position_ids {pos.shape} must be (batch, "
                             f"sequence) = {(batch, seq)} for input {x.shape}")
        limit = min(cos.shape[0], sin.shape[0])
        bad = (pos < 0) | (pos >= limit)
        if bad.any():
            k = int(np.flatnonzero(bad.reshape(-1))[0])
            # onnxruntime refuses too; numpy would read position -1 as the last row
            raise ShapeError(f"RotaryEmbedding: position_ids value {int(pos.reshape(-1)[k])} "
                             f"at index {k} is out of range [0, {limit}) for caches of "
                             f"{limit} positions")
        cos, sin = cos[pos], sin[pos]
    elif cos.ndim != 3 or sin.ndim != 3 or any(
            t.shape[1] != seq or t.shape[0] not in (1, batch) for t in (cos, sin)):
        raise ShapeError(f"RotaryEmbedding: without position_ids the caches must be 3-D "
                         f"(batch, sequence, {r // 2}) = {(batch, seq, r // 2)}, got "
                         f"cos_cache {cos.shape} and sin_cache {sin.shape}")
    if cos.shape[-1] != r // 2 or sin.shape[-1] != r // 2:
        raise ShapeError(f"RotaryEmbedding: cache last dim must be {r // 2}, got "
                         f"{cos.shape[-1]} and {sin.shape[-1]}")
    vf = _wide(v)
    c = _wide(cos)[:, :, None, :].astype(vf.dtype)  # (B, S, 1, R/2)
    sn = _wide(sin)[:, :, None, :].astype(vf.dtype)
    rot = vf[..., :r]
    if attrs["interleaved"]:
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
    else:
        x1, x2 = rot[..., :r // 2], rot[..., r // 2:]
    y1 = x1 * c - x2 * sn
    y2 = x2 * c + x1 * sn
    out = vf.copy()
    if attrs["interleaved"]:
        out[..., 0:r:2] = y1
        out[..., 1:r:2] = y2
    else:
        out[..., :r // 2] = y1
        out[..., r // 2:r] = y2
    out = out.astype(x.dtype)
    if x.ndim == 4:
        return (np.ascontiguousarray(out.transpose(0, 2, 1, 3)),)
    return (out.reshape(x.shape),)


OPS = (
    define("RMSNormalization", ["X", "scale"], ["Y"], _rms_norm_kernel,
           attrs=[("axis", "int", -1), ("epsilon", "float", 1e-5), ("stash_type", "int", 1)],
           infer=infer_same, since_version=23),
    define("RotaryEmbedding", ["X", "cos_cache", "sin_cache", "position_ids?"], ["Y"],
           _rotary_kernel, attrs=[("interleaved", "int", 0), ("num_heads", "int", 0),
                                  ("rotary_embedding_dim", "int", 0)],
           infer=infer_same, since_version=23),
    define("SwiGLU", ["A", "B"], ["Y"], _swiglu_kernel, attrs=[("alpha", "float", 1.0)],
           infer=_swiglu_infer, since_version=28),
    define("Swish", ["X"], ["Y"], _swish_kernel, attrs=[("alpha", "float", 1.0)],
           infer=infer_same, since_version=24),
)

KNOWN_FAILURES: dict[str, str] = {}

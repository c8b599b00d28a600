"""TF1's bicubic resize weights, as its ResizeBicubic kernel computes them.

TF does not evaluate the cubic kernel at each sample position: it rounds the position's
fraction to 1/1024 (lrintf) and looks the four weights up in a 1025-entry table (Keys'
kernel with a = -0.75 in the legacy mode, -0.5 with half_pixel_centers, where the taps
that fall outside the image get weight 0 and the rest are renormalized; in the legacy
mode they are clamped to the edge pixel). ONNX's cubic Resize evaluates the kernel
exactly, about 1e-3 away. With the image and output sizes known while building, the
resize is two contractions with these weights as constant (out, in) matrices, which
also exports to ONNX (Einsum).
"""

from __future__ import annotations

import math

import numpy as np

_TABLE_SIZE = 1 << 10


def _table(a: float) -> np.ndarray:
    """TF's coefficient table: row i holds the weights of the taps at distance x and
    x + 1, x = i / 1024 rounded to float32, computed in double and stored as float32."""
    x = (np.arange(_TABLE_SIZE + 1, dtype=np.float64) / _TABLE_SIZE).astype(np.float32)
    near = x.astype(np.float64)
    far = (x + np.float32(1.0)).astype(np.float64)
    table = np.empty((_TABLE_SIZE + 1, 2), np.float32)
    table[:, 0] = ((a + 2) * near - (a + 3)) * near * near + 1
    table[:, 1] = ((a * far - 5 * a) * far + 8 * a) * far - 4 * a
    return table


_TABLES = {}


def _scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    """TF's CalculateResizeScale, in float32."""
    if align_corners and out_size > 1:
        return np.float32(in_size - 1) / np.float32(out_size - 1)
    return np.float32(in_size) / np.float32(out_size)


def weight_matrix(in_size: int, out_size: int, align_corners: bool,
                  half_pixel_centers: bool) -> np.ndarray:
    """The (out_size, in_size) float32 matrix whose row o holds the weights TF's
    ResizeBicubic gives the input pixels for output pixel o along one axis."""
    keys = half_pixel_centers
    a = -0.5 if keys else -0.75
    table = _TABLES.get(a)
    if table is None:
        table = _TABLES[a] = _table(a)
    scale = _scale(in_size, out_size, align_corners)
    out = np.zeros((out_size, in_size), np.float32)
    for o in range(out_size):
        if keys:
            loc = (np.float32(o) + np.float32(0.5)) * scale - np.float32(0.5)
        else:
            loc = np.float32(o) * scale
        base = math.floor(float(loc))
        delta = np.float32(loc - np.float32(base))
        offset = int(np.rint(delta * np.float32(_TABLE_SIZE)))   # lrintf: ties to even
        taps = (table[offset, 1], table[offset, 0], table[_TABLE_SIZE - offset, 0],
                table[_TABLE_SIZE - offset, 1])
        index = [min(in_size - 1, max(0, base - 1 + k)) for k in range(4)]
        weights = list(taps)
        if keys:
            weights = [w if i == base - 1 + k else np.float32(0.0)
                       for k, (w, i) in enumerate(zip(weights, index))]
            total = np.float32(sum(weights, np.float32(0.0)))
            if abs(total) >= 1000.0 * np.finfo(np.float32).tiny:
                inverse = np.float32(1.0) / total
                weights = [np.float32(w * inverse) for w in weights]
        for i, w in zip(index, weights):
            out[o, i] += w
    return out


def weight_matrix_tensor(g, in_size, out_size, align_corners: bool,
                         half_pixel_centers: bool):
    """weight_matrix's (out_size, in_size) float32 matrix built from graph ops, for sizes
    known only at run time (int64 scalar tensors): the same steps in float32, so the
    run gives TF's weights too and the graph still exports to ONNX."""
    from . import api, api_extra, api_math

    f32, i64 = np.float32, np.int64
    keys = half_pixel_centers
    table = _TABLES.get(-0.5 if keys else -0.75)
    if table is None:
        table = _TABLES[-0.5 if keys else -0.75] = _table(-0.5 if keys else -0.75)
    in_f, out_f = api.cast(in_size, f32), api.cast(out_size, f32)
    scale = in_f / out_f
    if align_corners:
        scale = api.where(api.greater(out_size, i64(1)),
                          (in_f - f32(1.0)) / (out_f - f32(1.0)), scale)
    o = api.cast(api_extra.range(i64(0), out_size, i64(1)), f32)
    loc = (o + f32(0.5)) * scale - f32(0.5) if keys else o * scale
    base = api.floor(loc)
    offset = api.cast(api_math.round((loc - base) * f32(_TABLE_SIZE)), i64)
    near, far = g.constant(table[:, 0]), g.constant(table[:, 1])
    back = i64(_TABLE_SIZE) - offset
    taps = [api.gather(far, offset), api.gather(near, offset), api.gather(near, back),
            api.gather(far, back)]
    first = api.cast(base, i64) - i64(1)
    wanted = [first + i64(k) for k in range(4)]
    index = [api.clip_by_value(w, i64(0), in_size - i64(1)) for w in wanted]
    if keys:
        zero = api.zeros_like(taps[0])
        taps = [api.where(api.equal(i, w), t, zero) for i, w, t in zip(index, wanted, taps)]
        total = taps[0] + taps[1] + taps[2] + taps[3]
        usable = api.greater_equal(api.abs(total), f32(1000.0 * np.finfo(f32).tiny))
        inverse = f32(1.0) / api.where(usable, total, api.ones_like(total))
        taps = [api.where(usable, t * inverse, t) for t in taps]
    rows = [api.one_hot(i, in_size, dtype=f32) * api.expand_dims(t, 1)
            for i, t in zip(index, taps)]
    return rows[0] + rows[1] + rows[2] + rows[3]

"""numpy spellings of TF's NHWC convolution and pooling windows with TF's SAME/VALID
padding, the oracle of og.layers' and og.nn's TF1 image ops."""

import numpy as np


def same_pads(size, window, stride):
    """TF's SAME padding: output ceil(size / stride), the odd pixel at the end."""
    out = -(-size // stride)
    total = max((out - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


def windows(x, kh, kw, stride, dilation, padding, fill):
    """(N, OH, OW, kh, kw, C) windows of NHWC x under TF's padding rules."""
    n, h, w, c = x.shape
    rh, rw = (kh - 1) * dilation + 1, (kw - 1) * dilation + 1
    if padding == "same":
        (t, b), (l, r) = same_pads(h, rh, stride), same_pads(w, rw, stride)
    else:
        t = b = l = r = 0
    xp = np.pad(x, ((0, 0), (t, b), (l, r), (0, 0)), constant_values=fill)
    oh = (xp.shape[1] - rh) // stride + 1
    ow = (xp.shape[2] - rw) // stride + 1
    out = np.empty((n, oh, ow, kh, kw, c), x.dtype)
    for i in range(oh):
        for j in range(ow):
            out[:, i, j] = xp[:, i * stride:i * stride + rh:dilation,
                              j * stride:j * stride + rw:dilation]
    return out


def conv_nhwc(x, kernel, bias, stride, dilation, padding):
    kh, kw = kernel.shape[:2]
    win = windows(x, kh, kw, stride, dilation, padding, 0.0)
    return np.einsum("nijabc,abcf->nijf", win, kernel) + bias

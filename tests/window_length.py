"""The tests' own rules for sliding windows (pools and convolutions): output length and
windows over padding only, from the ONNX spec's formulas, independent of the kernels' code."""


def window_out(n, k, s, d, pb, pe, ceil=False):
    """Output length of a sliding window of k taps dilated d, stride s, over n cells
    padded (pb, pe); ONNX pooling's ceil mode (the last window must start inside the
    input or its begin padding) when `ceil`. Below 1 when no window fits."""
    span = n + pb + pe - ((k - 1) * d + 1)
    if span < 0:
        return 0
    if not ceil:
        return span // s + 1
    o = -(-span // s) + 1
    if (o - 1) * s >= n + pb:
        o -= 1
    return o


def padding_only_window(sp, kernel, strides, dil, pads, out):
    """True when some window (of the output sizes `out`) covers no input cell, or the
    SAME pads came out negative."""
    for n, k, s, d, (pb, pe), o in zip(sp, kernel, strides, dil, pads, out):
        if pb < 0 or pe < 0:
            return True
        for i in range(o):
            if not any(0 <= i * s - pb + j * d < n for j in range(k)):
                return True
    return False

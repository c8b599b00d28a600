"""The tests' own rule for a sliding window's output length (pools and convolutions),
written from the ONNX spec's formulas, independent of the kernels' geometry code."""


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

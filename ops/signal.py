"""Operators: signal family (DFT, STFT, window functions, MelWeightMatrix).

Complex values are stored as a trailing dimension of 2 (real, imaginary); real inputs
may use a trailing dimension of 1. Transforms run in numpy's FFT (complex128 for float64
inputs, complex64 otherwise) and are rounded once to the input dtype. Window and mel
matrices are computed in float64 and returned in `output_datatype` (ONNX TensorProto
type, default float).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import OpAttributeError, ShapeError
from .elementwise import onnx_type_to_numpy
from .registry import TensorInfo, define


def _scalar(v, op, what):
    a = np.asarray(v)
    if a.size != 1:
        raise ShapeError(f"{op}: {what} must be a scalar, got shape {a.shape}")
    return a.reshape(())[()]


def _to_complex(x, op):
    if x.ndim < 2 or x.shape[-1] not in (1, 2):
        raise ShapeError(f"{op}: the last dim must be 1 (real) or 2 (complex), got {x.shape}")
    # float64 in complex128, everything else in single precision (numpy's FFT keeps
    # complex64), which is also how the ONNX reference rounds.
    cdt = np.complex128 if x.dtype == np.float64 else np.complex64
    z = np.empty(x.shape[:-1], cdt)
    z.real = x[..., 0]
    z.imag = x[..., 1] if x.shape[-1] == 2 else 0
    return z


def _from_complex(z, dtype):
    return np.stack([z.real, z.imag], axis=-1).astype(dtype)


def _dft_axis(attrs, inputs, rank):
    """The transform axis over the signal dims (rank excludes the complex dim)."""
    if attrs.get("axis") is not None:
        axis = int(attrs["axis"])
    elif len(inputs) > 2 and inputs[2] is not None:
        axis = int(_scalar(inputs[2], "DFT", "axis"))
    else:
        axis = -2
    full = rank + 1
    if not (-full <= axis <= -2 or 0 <= axis <= full - 2):
        raise OpAttributeError(f"DFT: axis {axis} out of range for rank {full}")
    return axis % full


def _dft_kernel(inputs, attrs, ctx):
    """(Inverse) DFT along `axis`; onesided gives RFFT / takes IRFFT input."""
    x = np.asarray(inputs[0])
    z = _to_complex(x, "DFT")
    axis = _dft_axis(attrs, inputs, z.ndim)
    n_in = z.shape[axis]
    length = inputs[1] if len(inputs) > 1 else None
    inverse, onesided = attrs["inverse"], attrs["onesided"]
    if length is not None:
        n = int(_scalar(length, "DFT", "dft_length"))
    else:
        n = 2 * (n_in - 1) if (inverse and onesided) else n_in
    if n < 1:
        raise ShapeError(f"DFT: dft_length must be positive, got {n}")
    if inverse and onesided:
        if x.shape[-1] != 2:
            raise ShapeError("DFT: IRFFT (inverse, onesided) needs complex input")
        y = np.fft.irfft(z, n=n, axis=axis)
        return (y[..., None].astype(x.dtype),)
    if onesided:
        if x.shape[-1] != 1 and np.any(z.imag):
            raise ShapeError("DFT: onesided forward DFT needs real input")
        y = np.fft.rfft(z.real, n=n, axis=axis)
    elif inverse:
        y = np.fft.ifft(z, n=n, axis=axis)
    else:
        y = np.fft.fft(z, n=n, axis=axis)
    return (_from_complex(y, x.dtype),)


def _dft_infer(attrs, inputs):
    x = inputs[0]
    if x.shape is None:
        return [TensorInfo(x.dtype, None)]
    rank = len(x.shape)
    inverse, onesided = attrs["inverse"], attrs["onesided"]
    last = 1 if (inverse and onesided) else 2
    has_axis_input = len(inputs) > 2 and inputs[2] is not None
    if attrs.get("axis") is None and has_axis_input and inputs[2].value is None:
        return [TensorInfo(x.dtype, (None,) * (rank - 1) + (last,))]
    axis_inputs = list(inputs)
    if has_axis_input:
        axis_inputs[2] = inputs[2].value
    axis = _dft_axis(attrs, axis_inputs, rank - 1)
    out = list(x.shape[:-1]) + [last]
    n_in = x.shape[axis]
    length = inputs[1] if len(inputs) > 1 else None
    if length is not None:
        n = None if length.value is None else int(np.asarray(length.value).reshape(()))
    elif n_in is None:
        n = None
    else:
        n = 2 * (n_in - 1) if (inverse and onesided) else n_in
    if n is not None and n < 1:  # as the kernel says
        raise ShapeError(f"DFT: dft_length must be positive, got {n}")
    if onesided and not inverse and n is not None:
        n = n // 2 + 1
    out[axis] = n
    return [TensorInfo(x.dtype, tuple(out))]


def _stft_kernel(inputs, attrs, ctx):
    """Short-time Fourier transform: (batch, frames, bins, 2) from (batch, length, 1|2),
    or from a real (batch, length) signal without the trailing 1, which PyTorch's
    exporter writes for torch.stft and onnxruntime takes as real."""
    x = np.asarray(inputs[0])
    if x.ndim == 2:
        x = x[..., None]
    z = _to_complex(x, "STFT")
    if z.ndim != 2:
        raise ShapeError(f"STFT: signal must be (batch, length), (batch, length, 1) or "
                         f"(batch, length, 2), got {x.shape}")
    step = int(_scalar(inputs[1], "STFT", "frame_step"))
    window = inputs[2] if len(inputs) > 2 else None
    flen = inputs[3] if len(inputs) > 3 else None
    if flen is not None:
        frame = int(_scalar(flen, "STFT", "frame_length"))
    elif window is not None:
        frame = int(np.asarray(window).shape[0])
    else:
        raise ShapeError("STFT: needs a window or a frame_length")
    if window is not None and np.asarray(window).shape != (frame,):
        raise ShapeError(f"STFT: window shape {np.asarray(window).shape} != ({frame},)")
    if step < 1 or frame < 1 or frame > z.shape[1]:
        raise ShapeError(f"STFT: frame_length {frame} / frame_step {step} invalid for "
                         f"signal length {z.shape[1]}")
    frames = (z.shape[1] - frame) // step + 1
    starts = np.arange(frames) * step
    seg = z[:, starts[:, None] + np.arange(frame)[None, :]]  # (batch, frames, frame)
    if window is not None:
        seg = seg * np.asarray(window).astype(seg.real.dtype)
    onesided = attrs["onesided"]
    if onesided and x.shape[-1] == 2:
        raise ShapeError("STFT: onesided output needs a real signal")
    y = np.fft.rfft(seg.real, axis=-1) if onesided else np.fft.fft(seg, axis=-1)
    return (_from_complex(y, x.dtype),)


def _stft_infer(attrs, inputs):
    """(batch, frames, bins, 2); frames and bins where the signal length, frame_step
    and frame_length (or the window's length) are known, refused as the kernel refuses
    them when they do not fit."""
    x = inputs[0]
    batch = x.shape[0] if x.shape is not None else None

    def known(k, what):
        t = inputs[k] if len(inputs) > k else None
        return None if t is None or t.value is None else int(_scalar(t.value, "STFT", what))

    step, frame = known(1, "frame_step"), known(3, "frame_length")
    window = inputs[2] if len(inputs) > 2 else None
    if frame is None and (len(inputs) <= 3 or inputs[3] is None) and window is not None \
            and window.shape is not None and len(window.shape) == 1:
        frame = window.shape[0]
    length = x.shape[1] if x.shape is not None and len(x.shape) >= 2 else None
    if (step is not None and step < 1) or (frame is not None and frame < 1) or (
            frame is not None and length is not None and frame > length):
        raise ShapeError(f"STFT: frame_length {frame} / frame_step {step} invalid for "
                         f"signal length {length}")
    frames = None if None in (step, frame, length) else (length - frame) // step + 1
    bins = None if frame is None else (frame // 2 + 1 if attrs["onesided"] else frame)
    return [TensorInfo(x.dtype, (batch, frames, bins, 2))]


# ---------------------------------------------------------------------------------------
# Windows


def _window_kernel(coeffs):
    """A generalized cosine window sum_k (-1)^k a_k cos(2 pi k n / N), computed in float64
    and converted to output_datatype as numpy's astype does (as ONNX's reference does;
    integer types truncate toward zero, like onnxruntime's static_cast)."""
    def kernel(inputs, attrs, ctx):
        size = int(_scalar(inputs[0], "window", "size"))
        dtype = onnx_type_to_numpy(attrs["output_datatype"])
        if size <= 0:
            return (np.zeros(0, dtype),)
        if size == 1 and not attrs["periodic"]:
            # The symmetric formula divides by N - 1 = 0 (onnxruntime and the reference
            # give NaN, 0/0); the spec's text does not define that case. A window of
            # one sample is that sample unattenuated: 1, as numpy's hanning(1),
            # hamming(1), blackman(1), PyTorch's *_window(1) and SciPy give. (Periodic
            # size 1 divides by N = 1 and is well defined: the formula's value at n=0.)
            return (np.ones(1).astype(dtype),)
        denom = size if attrs["periodic"] else size - 1
        n = np.arange(size, dtype=np.float64)
        phase = 2 * math.pi * n / denom
        # The cosine terms first and a_0 last, in the reference's order: at the peak
        # Blackman's 0.42 + 0.5 + 0.08 sums to 0.9999999999999999 (which truncates to 0
        # in an integer output_datatype), 0.5 + 0.08 + 0.42 to exactly 1.
        w = np.zeros(size)
        for k, a in list(enumerate(coeffs))[1:]:
            w += (-1) ** k * a * np.cos(k * phase)
        w += coeffs[0]
        return (w.astype(dtype),)
    return kernel


def _window_infer(attrs, inputs):
    value = inputs[0].value
    try:
        dtype = onnx_type_to_numpy(attrs["output_datatype"])
    except OpAttributeError:
        dtype = None
    return [TensorInfo(dtype, (None if value is None else int(np.asarray(value).reshape(())),))]


_HAMMING_ALPHA = 25.0 / 46.0
_WINDOWS = {
    "HannWindow": (0.5, 0.5),
    "HammingWindow": (_HAMMING_ALPHA, 1.0 - _HAMMING_ALPHA),
    "BlackmanWindow": (0.42, 0.5, 0.08),
}


# ---------------------------------------------------------------------------------------
# MelWeightMatrix


def _hz_to_mel(f):
    return 2595.0 * np.log10(1.0 + f / 700.0)


def _mel_to_hz(m):
    return 700.0 * (10.0 ** (m / 2595.0) - 1.0)


def _mel_kernel(inputs, attrs, ctx):
    """Triangular filters (peak 1) from linear DFT bins to `num_mel_bins` mel bands.

    Band edges are equally spaced in mel from the lower edge frequency and mapped to
    the DFT bin floor((dft_length + 1) * f / sample_rate); filter i rises from edge i
    to edge i+1 and falls to edge i+2.
    """
    mels = int(_scalar(inputs[0], "MelWeightMatrix", "num_mel_bins"))
    dft_length = int(_scalar(inputs[1], "MelWeightMatrix", "dft_length"))
    rate = float(_scalar(inputs[2], "MelWeightMatrix", "sample_rate"))
    low = float(_scalar(inputs[3], "MelWeightMatrix", "lower_edge_hertz"))
    high = float(_scalar(inputs[4], "MelWeightMatrix", "upper_edge_hertz"))
    dtype = onnx_type_to_numpy(attrs["output_datatype"])
    bins = dft_length // 2 + 1
    if mels < 1 or rate <= 0 or not 0 <= low < high:
        raise ShapeError("MelWeightMatrix: need num_mel_bins >= 1, sample_rate > 0 and "
                         "0 <= lower_edge_hertz < upper_edge_hertz")
    low_mel = _hz_to_mel(low)
    # The reference divides the mel range into mels + 2 steps (so the last edge stops
    # one step short of upper_edge_hertz); we follow it to agree with its outputs.
    step = (_hz_to_mel(high) - low_mel) / (mels + 2)
    edges_mel = np.arange(mels + 2) * step + low_mel
    edges = np.floor_divide((dft_length + 1) * _mel_to_hz(edges_mel), rate).astype(np.int64)
    lo, mid, hi = edges[:-2], edges[1:-1], edges[2:]  # per band, (mels,)
    j = np.arange(bins)[:, None]  # (bins, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rise = np.where(mid > lo, (j - lo) / (mid - lo), 0.0)
        fall = np.where(hi > mid, (hi - j) / (hi - mid), 0.0)
    out = np.zeros((bins, mels))
    rising = (j >= lo) & (j <= mid) & (mid > lo)
    out = np.where(rising, rise, out)
    out = np.where((j == mid) & (mid == lo), 1.0, out)
    falling = (j >= mid) & (j < hi)
    out = np.where(falling, fall, out)
    return (out.astype(dtype),)


def _mel_infer(attrs, inputs):
    try:
        dtype = onnx_type_to_numpy(attrs["output_datatype"])
    except OpAttributeError:
        dtype = None
    m, d = inputs[0].value, inputs[1].value
    return [TensorInfo(dtype, (None if d is None else int(np.asarray(d).reshape(())) // 2 + 1,
                               None if m is None else int(np.asarray(m).reshape(()))))]


_WINDOW_ATTRS = [("output_datatype", "int", 1), ("periodic", "int", 1)]

OPS = tuple(sorted([
    define("DFT", ["input", "dft_length?", "axis?"], ["output"], _dft_kernel,
           attrs=[("axis", "int", None), ("inverse", "int", 0), ("onesided", "int", 0)],
           infer=_dft_infer, since_version=20,
           doc="The axis attribute is the opset-17 form; opset 20 passes axis as input 2."),
    define("MelWeightMatrix", ["num_mel_bins", "dft_length", "sample_rate",
                               "lower_edge_hertz", "upper_edge_hertz"], ["output"],
           _mel_kernel, attrs=[("output_datatype", "int", 1)], infer=_mel_infer,
           since_version=17),
    define("STFT", ["signal", "frame_step", "window?", "frame_length?"], ["output"],
           _stft_kernel, attrs=[("onesided", "int", 1)], infer=_stft_infer,
           since_version=17),
] + [define(name, ["size"], ["output"], _window_kernel(coeffs), attrs=_WINDOW_ATTRS,
            infer=_window_infer, since_version=17) for name, coeffs in _WINDOWS.items()],
    key=lambda op: op.name))

KNOWN_FAILURES: dict[str, str] = {}
